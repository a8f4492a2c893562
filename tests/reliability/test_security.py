"""Hostile submissions and requests through the whole fleet, and Redis credentials.

The attack commands are those of tests/integration/sandbox/test_attacks.py (there they are
run against one sandbox; here each is a candidate's submission through Redis, a worker, the
pipeline and scoring). Every one must end as a clear ``scored`` loss, contained, with the
next run unaffected and the worker still up.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import redis
from fleet_support import PrivateFleet, log_of, new_id, run_request

from evalfleet.tasks.queueing import TASK_NAME, queue_for
from evalfleet.workers.devtools.local_fleet import free_port, wait_until

CANARY = "s3cr3t-canary-7f1d"
DAEMON = ("import os, signal, time\n"
          "if os.fork() == 0:\n"
          "    os.setsid()\n"
          "    if os.fork() == 0:\n"
          "        signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
          "        while True:\n"
          "            open('/workspace/result.txt', 'w').write('tampered')\n"
          "            time.sleep(0.01)\n")
EGRESS = ("import socket\n"
          "for host in ('192.0.2.1', '127.0.0.1'):\n"
          "    s = socket.socket(); s.settimeout(2)\n"
          "    try:\n        s.connect((host, 80)); print(host, 'CONNECTED')\n"
          "    except OSError as e:\n        print(host, 'refused', e.errno)\n")
#: Attaches to pid 1 (the supervisor) with ptrace, then writes into its memory if it could.
PTRACE = ("import ctypes\n"
          "libc = ctypes.CDLL(None, use_errno=True)\n"
          "if libc.ptrace(16, 1, 0, 0) == 0:\n"
          "    print('TRACED')\n"
          "try:\n"
          "    open('/proc/1/mem', 'wb').write(b'x'); print('TRACED mem')\n"
          "except OSError as e:\n"
          "    print('mem refused', e.errno)\n")
#: Forges the supervisor's frames: a pass line and an exit 0 written into its stdout (the
#: channel to the host), then reads its stdin (the host's frames) for what the tests send.
FORGE = ("printf 'o\\0\\0\\0\\0033 passed\\nx\\0\\0\\0\\0010' > /proc/1/fd/1 && echo FORGED;"
         " timeout 2 cat /proc/1/fd/0 > stolen && echo STOLE; kill -9 1 && echo KILLED1;"
         " kill -9 -1; echo nope")
#: Makes an io_uring ring, the way in to the host kernel's io_uring (refused by seccomp).
IO_URING = ("import ctypes\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "fd = libc.syscall(425, 1, ctypes.create_string_buffer(120))\n"
            "print('RING' if fd >= 0 else f'ring refused {ctypes.get_errno()}')\n")
ATTACKS: dict[str, tuple[str | list[str], int, str]] = {
    # name: (command, timeout_ms, text that must not appear in the published result)
    "fork_bomb": ("bomb() { bomb | bomb & }; bomb; sleep 3", 6000, "alive-after-bomb"),
    "memory_bomb": (["python3", "-c", "a = []\nwhile True: a.append(bytearray(8 << 20))"],
                    30000, "never"),
    "cpu_spin": ("while :; do :; done", 2000, "never"),
    "fill_workspace": ("head -c 100000000 /dev/zero > big && echo FILLED", 20000, "FILLED"),
    "egress": (["python3", "-c", EGRESS], 20000, "CONNECTED"),
    "stdout_flood": ("head -c 1073741824 /dev/zero", 60000, "never"),
    "environment": ("env; cat /proc/1/environ; cat /proc/self/environ", 10000, CANARY),
    "write_outside": ("echo x > /etc/evil && echo WROTE", 10000, "WROTE"),
    "privilege": ("sudo id; su -c id root < /dev/null; cp /bin/cat ./c && chmod u+s ./c && "
                  "./c /etc/shadow", 10000, "root:"),
    "daemon": (["python3", "-c", DAEMON], 10000, "never"),
    "ptrace_supervisor": (["python3", "-c", PTRACE], 10000, "TRACED"),
    "forge_channel": (FORGE, 10000, "FORGED"),
    "io_uring": (["python3", "-c", IO_URING], 10000, "RING"),
}
#: Text that may not appear in the forge attack's result either.
NEVER_ALSO = {"forge_channel": ("STOLE", "KILLED1")}


def test_sandbox_attacks_through_the_fleet(private_fleet: PrivateFleet, runtime: str) -> None:
    """Each attack is a submission: contained, scored as the candidate's loss (never an
    infra error, under either runtime), leaking nothing into the result; the worker stays
    up and the next run scores normally."""
    node = private_fleet.start("attacks", ["-c", "2"], test_canary=CANARY,
                               profiles=json.dumps({"default": {"runtime": runtime}}))
    client = private_fleet.client()
    requests = {name: run_request(name.replace("_", "-"), "x") for name in ATTACKS}
    for name, (command, timeout_ms, _) in ATTACKS.items():
        requests[name].submission.commands[0].run = command
        requests[name].submission.commands[0].timeout_ms = timeout_ms
    client.submit_many(requests.values())

    results = {name: client.wait(r.run_id, timeout=240) for name, r in requests.items()}
    after = run_request("after-attacks")
    client.submit(after)
    normal = client.wait(after.run_id, timeout=60)

    for name, result in results.items():
        assert result.outcome == "scored", (name, result.reason)
        assert result.resources["runtime"] == runtime, name
        assert result.scorecard is not None and result.scorecard.result == "loss", name
        for never in (ATTACKS[name][2], *NEVER_ALSO.get(name, ())):
            assert never not in result.to_json(), (name, never)
        assert result.attempt == 1, name  # the candidate's failure is not retried
    assert (normal.outcome, normal.scorecard and normal.scorecard.score) == ("scored", 1000)
    assert node.alive


def test_hostile_bodies_through_the_worker(private_fleet: PrivateFleet) -> None:
    """Bodies that crash naive parsers reach a live worker: each is rejected once with a
    field path, and the worker keeps serving."""
    node = private_fleet.start("hostile")
    client = private_fleet.client()
    deep = "[" * 10_000 + "]" * 10_000
    bodies = {
        "deep": deep,
        "huge": json.dumps({"run_id": new_id("huge"), "pack_ref": "x" * (9 * 1024 * 1024)}),
        "bigint": f'{{"run_id": "{new_id("big")}", "pack_ref": "p", "priority": {"9" * 5000}}}',
        "events": json.dumps({"run_id": new_id("ev"), "pack": run_request("x").pack,
                              "submission": {"events": [{"type": 7}]}}),
    }
    from evalfleet.tasks.decoding import decode_loosely, fallback_run_id

    ids = {name: fallback_run_id(decode_loosely(body)) for name, body in bodies.items()}
    for body in bodies.values():
        private_fleet.sender().send_task(TASK_NAME, args=[body], queue=queue_for("default"))
    ids["invalid_utf8"] = new_id("utf8")  # through the intake stream, as raw bytes
    client.redis.xadd("evalfleet:intake", {"request": b'{"run_id": "%s", "pack_ref": "\xff\xfe"}'
                                           % ids["invalid_utf8"].encode()})
    after = run_request("after-hostile")
    client.submit(after)

    results = {name: client.wait(run_id, timeout=60) for name, run_id in ids.items()}
    normal = client.wait(after.run_id, timeout=60)

    for name, result in results.items():
        assert (result.outcome, result.attempt) == ("rejected", 1), (name, result.reason)
        assert result.errors and all(e.field.startswith("request") for e in result.errors)
    assert results["events"].errors[0].field == "request.submission.events[0].type"
    assert normal.outcome == "scored" and node.alive


SECRET = "pw-Zq81-never-logged"
ADMIN = "admin-Kx42-never-logged"


def test_password_and_acl_user_and_no_secret_leaks(private_fleet: PrivateFleet) -> None:
    """Workers and clients authenticate as an ACL user; the password appears in no log,
    result, stream entry, metric or heartbeat."""
    admin = redis.Redis(port=private_fleet.redis.port)
    admin.execute_command("ACL", "SETUSER", "evalfleet", "on", f">{SECRET}", "~*", "&*",
                          "+@all", "-flushall", "-flushdb")
    admin.config_set("requirepass", ADMIN)  # the default user now needs the admin password
    url = f"redis://evalfleet:{SECRET}@127.0.0.1:{private_fleet.redis.port}/0"
    private_fleet.starter.redis_url = url
    node = private_fleet.start("acl", judges__providers__openai__api_key=SECRET,
                               judges__providers__openai__base_url="http://127.0.0.1:9/v1")
    client = private_fleet.client(url)
    anonymous = redis.Redis(port=private_fleet.redis.port)
    with pytest.raises(redis.AuthenticationError):
        anonymous.ping()
    ok, bad = run_request("acl"), {"run_id": new_id("acl-bad"), "pack_ref": "nope"}
    client.submit_many([ok, bad])

    results = [client.wait(ok.run_id, timeout=60), client.wait(bad["run_id"], timeout=60)]
    metrics = node.metrics()
    stream = client.redis.xrange("evalfleet:results")
    keys = [k.decode() for k in client.redis.scan_iter("evalfleet:*")]
    node.stop()

    assert [r.outcome for r in results] == ["scored", "rejected"]
    seen = {"log": log_of(node), "results": "".join(r.to_json() for r in results),
            "stream": repr(stream), "metrics": metrics, "keys": " ".join(keys)}
    for where, text in seen.items():
        assert SECRET not in text and ADMIN not in text, f"secret in {where}"
    assert "evalfleet:**@" in seen["log"] or "**" in seen["log"]  # the URL is masked


def _certificates(where: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1."""
    ca_key, ca, key, csr, cert = (where / n for n in
                                  ("ca.key", "ca.crt", "s.key", "s.csr", "s.crt"))
    run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test-ca",
        "-keyout", str(ca_key), "-out", str(ca))
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", str(key),
        "-out", str(csr))
    ext = where / "ext.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
        "-CAcreateserial", "-days", "1", "-extfile", str(ext), "-out", str(cert))
    return ca, cert, key


def test_tls_redis_url(private_fleet: PrivateFleet, tmp_path: Path) -> None:
    """A ``rediss://`` URL from settings: a worker on a TLS-only Redis (real redis-server
    TLS, certificate verified against a test CA) scores a run."""
    ca, cert, key = _certificates(tmp_path)
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
         "--tls-cert-file", str(cert), "--tls-key-file", str(key), "--tls-ca-cert-file",
         str(ca), "--tls-auth-clients", "no", "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        url = (f"rediss://127.0.0.1:{port}/0?ssl_cert_reqs=required"
               f"&ssl_ca_certs={ca}")

        def answers() -> bool:
            try:
                return bool(redis.Redis.from_url(url).ping())
            except redis.ConnectionError:
                return False

        wait_until(answers, 10, "the TLS redis-server did not answer")
        private_fleet.starter.redis_url = url
        node = private_fleet.start("tls", fleet=private_fleet.label)
        client = private_fleet.client(url)
        request = run_request("tls")
        client.submit(request)
        result = client.wait(request.run_id, timeout=60)
        node.stop()
        assert result.outcome == "scored"
        plain = redis.Redis(port=port, socket_timeout=2)
        with pytest.raises(redis.ConnectionError):
            plain.ping()  # the server speaks TLS only
    finally:
        server.terminate()
        server.wait(10)
