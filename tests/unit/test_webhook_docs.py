"""The receiver's verification snippet in docs/platform.md ("Webhooks") works as it is:
it accepts what the fleet signs and refuses a changed body or a stranger's secret."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from evalfleet.tasks.webhooks.signature import sign

PLATFORM = Path(__file__).parents[2] / "docs" / "platform.md"


def snippet() -> str:
    section = PLATFORM.read_text().split("## Webhooks", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_documented_receiver_verifies_a_delivery() -> None:
    scope: dict[str, Any] = {}
    exec(snippet(), scope)  # the docs' code, as a platform would paste it
    verify = scope["verify"]
    body = b'{"run_id":"r1","outcome":"scored"}'
    header = sign(body, ["new-secret", "old-secret"], int(time.time()))

    assert verify(body, header, "new-secret") and verify(body, header, "old-secret")
    assert not verify(body + b"x", header, "new-secret")
    assert not verify(body, header, "someone else's")
    assert not verify(body, sign(body, ["new-secret"], int(time.time()) - 600), "new-secret")
