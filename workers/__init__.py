"""The process edge: settings, Celery app, worker and CLI entry points, metrics, health."""
