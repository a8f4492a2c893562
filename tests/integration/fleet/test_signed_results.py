"""Signed results through a real fleet (issue 43): every result a worker publishes — a
sandbox run's, a rejection, a cancel through the intake — carries the fleet's signature,
and `evalfleet verify` holds it against the key `evalfleet keys list` shows and the pack."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import yaml
from parked import PARKED_PACK

from evalfleet.tasks.checking.submissions import load_submission
from evalfleet.tasks.messages import RunRequest
from evalfleet.tasks.redis_keys import INTAKE_STREAM, result_key

PACKS = Path(__file__).parents[3] / "examples" / "packs"
FIZZBUZZ = PACKS / "fizzbuzz-coding"


def evalfleet(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalfleet.workers", *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def fleet_key(env: dict[str, str]) -> tuple[str, str]:
    """The node's key id and public key as `evalfleet keys show` prints them (its settings'
    key file), checked to be among those `evalfleet keys list` finds in Redis."""
    shown = evalfleet("keys", "show", env=env)
    assert shown.returncode == 0, shown.stderr
    said = dict(line.split(":", 1) for line in shown.stdout.splitlines())
    key_id, public = said["key id"].strip(), said["public key"].strip()
    listed = evalfleet("keys", "list", env=env)
    assert f"{key_id}={public}  (worker " in listed.stdout, listed.stdout
    return key_id, public


def published(client: Any, run_id: str, timeout: float = 120) -> bytes:
    client.wait(run_id, timeout=timeout)
    body = client.redis.get(result_key(run_id))
    assert body is not None
    return bytes(body)


def test_a_sandbox_run_is_signed_and_verifies_against_its_evidence(
        start_worker: Any, client: Any, tmp_path: Path) -> None:
    """The published body verifies (exit 0) with the key the fleet lists and the pack; its
    provenance names the image, runtime, supervisor and spec digest; the same body with
    a changed score exits 13, with a changed worker 10."""
    node = start_worker("signed")
    request = RunRequest(run_id=f"signed-{uuid.uuid4().hex[:10]}",
                         pack=yaml.safe_load((FIZZBUZZ / "pack.yaml").read_text()),
                         submission=load_submission(FIZZBUZZ / "submissions" / "pass"))
    client.submit(request)
    body = published(client, request.run_id)
    env = node.env
    key_id, key = fleet_key(env)

    said = evalfleet("verify", request.run_id, "--public-key", key, "--pack",
                     str(FIZZBUZZ / "pack.yaml"), env=env)

    assert said.returncode == 0, said.stdout + said.stderr
    assert said.stdout.startswith(f"VERIFIED: {request.run_id}")
    document = json.loads(body)
    provenance = document["provenance"]
    assert document["signature"]["key_id"] == key_id
    assert provenance["image_digest"].startswith("sha256:")
    assert provenance["runtime"] == "runsc"
    assert provenance["supervisor"].startswith("evalfleet-supervisor protocol ")
    assert provenance["spec_digest"].startswith("sha256:")
    for change, code in (({"scorecard": {**document["scorecard"], "score": 10}}, 13),
                         ({"worker": "another"}, 10)):
        file = tmp_path / f"changed-{code}.json"
        file.write_text(json.dumps({**document, **change}))
        said = evalfleet("verify", str(file), "--public-key", key, "--pack",
                         str(FIZZBUZZ / "pack.yaml"), env=env)
        assert said.returncode == code, said.stdout + said.stderr


def test_a_rejection_and_a_cancel_through_the_intake_are_signed_by_the_fleet(
        start_worker: Any, client: Any) -> None:
    """Results with no scorecard verify by their signature alone; a cancel carried out by
    the fleet's forwarder is signed like any other result."""
    node = start_worker("signed-intake")
    rejected = f"signed-bad-{uuid.uuid4().hex[:8]}"
    client.redis.xadd(INTAKE_STREAM, {"request": json.dumps({"run_id": rejected,
                                                              "pack": {"pack": {}}})})
    parked = RunRequest(run_id=f"signed-parked-{uuid.uuid4().hex[:8]}", pack=PARKED_PACK)
    client.submit(parked)
    client.redis.xadd(INTAKE_STREAM, {"cancel": parked.run_id})
    published(client, rejected)
    published(client, parked.run_id)
    env, (_, key) = node.env, fleet_key(node.env)

    for run_id, outcome in ((rejected, "rejected"), (parked.run_id, "cancelled")):
        said = evalfleet("verify", run_id, "--public-key", key, env=env)
        assert said.returncode == 0, said.stdout + said.stderr
        assert f"outcome {outcome}" in said.stdout


def test_workers_sharing_a_key_file_sign_alike_and_one_creates_it(
        start_worker: Any, tmp_path: Path) -> None:
    """Two nodes started at once on one key file: one of them creates it (mode 0600), and
    both say they sign with its key."""
    nodes = [start_worker.launch("twin-a"), start_worker.launch("twin-b")]
    for node in nodes:
        node.wait_ready()
    key_id, _ = fleet_key(nodes[0].env)
    logs = [node.log.read_text() for node in nodes]

    assert oct(os.stat(tmp_path / "signing.key").st_mode & 0o777) == "0o600"
    assert sum("created the signing key" in log for log in logs) == 1
    assert all(f"results are signed as {key_id} " in log for log in logs)
