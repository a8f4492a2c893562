"""The documents match the repository: the README's pack is a valid pack, the README
stays a ten-minute read, and every relative link of the documents names a file that is
there (issue 42: the reference material moved to docs/, per role)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from evalfleet.scoring import load_pack

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
DOCUMENTS = [README, ROOT / "CONTRIBUTING.md", ROOT / "BENCHMARKS.md", ROOT / "CHANGELOG.md",
             *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def readme_pack() -> str:
    section = README.read_text().split("## A pack in 20 lines", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_the_readme_pack_is_a_valid_pack_of_twenty_lines() -> None:
    text = readme_pack()
    pack = load_pack(yaml.safe_load(text))
    assert len(text.splitlines()) <= 20
    assert (pack.spec.name, [v.key for v in pack.spec.validators]) == ("hello", ["says_hello"])


def test_the_readme_is_read_in_ten_minutes() -> None:
    assert len(README.read_text().split()) <= 1500


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_names_a_file_that_is_there(document: Path) -> None:
    targets = [t for t in LINK.findall(document.read_text()) if "://" not in t
               and not t.startswith("mailto:")]
    missing = [t for t in targets if not (document.parent / t).exists()]
    assert not missing, missing
