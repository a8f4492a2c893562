"""The generated files of the repository match their sources (workers.devtools.generated).

Each is generated again in memory and compared with the committed file: the KEDA triggers
(one per priority list of every served profile), the PrometheusRule and the dashboard
ConfigMap (copies of deploy/prometheus/alerts.yml and deploy/grafana/evalfleet.json),
kustomize's image paths for the profiles' sandbox images, and docs/settings.md (every
setting of workers/settings.py). A failure says the one command that regenerates them all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from evalfleet.tasks.queueing import PRIORITY_STEPS
from evalfleet.workers.devtools import generated, manifests, settings_doc
from evalfleet.workers.settings import Settings

ROOT = Path(__file__).parents[3]


@pytest.mark.parametrize("path", sorted(generated.FILES), ids=str)
def test_the_committed_file_is_what_its_sources_generate(path: Path) -> None:
    committed = (ROOT / path).read_text() if (ROOT / path).is_file() else None
    assert committed == generated.FILES[path](ROOT), (
        f"{path} is stale: run `{generated.COMMAND}` from the repository root and commit it")


def documents(path: Path) -> list[dict[str, object]]:
    return [d for d in yaml.safe_load_all((ROOT / path).read_text()) if d]


def test_the_prometheus_rule_is_the_alerts_file() -> None:
    (rule,) = documents(manifests.BASE / "alerts.yaml")
    assert rule["spec"] == yaml.safe_load((ROOT / manifests.ALERTS).read_text())


def test_the_dashboard_config_map_is_the_dashboard_file_byte_for_byte() -> None:
    (config,) = documents(manifests.BASE / "dashboard.yaml")
    assert config["data"] == {"evalfleet.json": (ROOT / manifests.DASHBOARD).read_text()}


def test_keda_has_one_trigger_per_priority_list_of_every_profile_from_one_list() -> None:
    """Two profiles in EVALFLEET_QUEUES: twenty-two triggers (ten priority lists and the
    runs waiting for admission, each), all in the one summed formula."""
    scaled = manifests.scaled_object(["default", "gpu-large"])
    names = [t["name"] for t in scaled["spec"]["triggers"]]
    lists = [t["metadata"]["listName"] for t in scaled["spec"]["triggers"]]

    assert len(names) == len(set(names)) == 2 * (len(PRIORITY_STEPS) + 1)
    assert lists[:2] == ["evalfleet.default", "evalfleet.default:1"]
    assert lists[10] == "evalfleet:admission:depth:evalfleet.default"
    assert lists[11:13] == ["evalfleet.gpu-large", "evalfleet.gpu-large:1"]
    assert "gpu_large_waiting" in names
    assert scaled["spec"]["advanced"]["scalingModifiers"]["formula"].split(" + ") == names
    assert "gpu_large_p9" in names  # an identifier KEDA's formula can name


def test_settings_doc_has_a_row_for_every_setting_with_its_env_name() -> None:
    text = settings_doc.render()
    for name in Settings.model_fields:
        assert f"| `EVALFLEET_{name.upper()}` |" in text, name
    assert "| `EVALFLEET_PROFILES__<PROFILE>__MEMORY_MB` | int, > 5 | `512` |" in text
    assert "`EVALFLEET_JUDGES__PROVIDERS__<PROVIDER>__BASE_URL` | str | required |" in text
    assert "| `EVALFLEET_PREFLIGHT__MODE` | \"off\" or \"flag\" or \"require\" | `off` |" in text
    assert "`EVALFLEET_SIGNING__TRUSTED_KEYS` | list[str] (JSON) | `[]` |" in text


def test_a_setting_without_a_docstring_stops_the_generator() -> None:
    class Undocumented(BaseModel):
        """A section."""

        documented: int = 1
        """Says what it is."""
        bare: int = 2

    with pytest.raises(settings_doc.MissingDocstring, match=r"Undocumented\.bare"):
        settings_doc.section(Undocumented, "EVALFLEET_X__", "x")


def test_check_lists_a_stale_file_and_write_mends_it(tmp_path: Path) -> None:
    """``--check`` exits 1 naming the stale file; a plain run rewrites it, then all agree."""
    for path in [*generated.FILES, manifests.BASE / "config.yaml", manifests.ALERTS,
                 manifests.DASHBOARD]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text((ROOT / path).read_text())
    data = json.loads((tmp_path / manifests.DASHBOARD).read_text())
    (tmp_path / manifests.DASHBOARD).write_text(json.dumps({**data, "title": "x"}))

    assert generated.stale(tmp_path) == [manifests.BASE / "dashboard.yaml"]
    assert generated.write(tmp_path) == [manifests.BASE / "dashboard.yaml"]
    assert generated.stale(tmp_path) == []
