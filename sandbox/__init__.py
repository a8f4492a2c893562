"""Sandboxes: the contract every driver meets, and the Docker driver."""
