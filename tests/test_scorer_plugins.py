"""A scorer from another distribution: declared under the entry-point group ``construct_eval.scorers``
by a throwaway distribution on the path, it is a ``construct-eval`` command and a scorer family,
and runs end to end (its calls, its rows, ``evaluate``) in a fresh interpreter, as a user's would.
The plugin below is the one ``docs/usage.md`` shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from construct_eval.serving.scripted_server import ScriptedServer
from tests.conftest import injected_run

PLUGIN = '''
"""One 1-10 question per output, read from ``Rating: [[x]]``: a scorer in a user's own package."""
from typing import NamedTuple

from construct_eval.fields import DOCUMENT
from construct_eval.judging.stage import ModelScorer
from construct_eval.llm.client import ChatRequest
from construct_eval.parsing import parse_rating
from construct_eval.scorer_registry import ScorerSpec


class Task(NamedTuple):
    item: object
    key: str


class WholeCheck(ModelScorer):
    spec = ScorerSpec("whole-check", "whole-output check", "#117733", cost_in="whole_checks", cost_label="whole checks")
    command = "whole-check"
    summary = "one 1-10 question per output"

    def plan(self, items):
        return [Task(item, f"{item.doc_id}|{item.output_hash}") for item in items]

    def request_for(self, task):
        text = f"Document:\\n{task.item.request}\\n\\nExtraction:\\n{task.item.output}\\n\\nHow right is it? Rating: [[x]]"
        return ChatRequest(messages=[{"role": "user", "content": text}], max_tokens=32)

    def row_for(self, task, result):
        parsed = parse_rating(result.text) if result.ok else None
        return {"id": task.item.doc_id, "output_hash": task.item.output_hash, "key": task.key,
                "rating": parsed.rating if parsed else None,
                "latency_s": result.latency_s, "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens, "model": self.client.endpoint.model}

    def score_rows(self, rows, **_):
        return [{"id": r["id"], "scorer": "whole-check", "field": DOCUMENT, "score": r["rating"]} for r in rows]
'''


def _distribution(root: Path) -> Path:
    """A distribution as pip leaves one in site-packages: its module and its dist-info."""
    root.mkdir(parents=True)
    (root / "whole_check_plugin.py").write_text(textwrap.dedent(PLUGIN))
    info = root / "whole_check_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: whole-check-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[construct_eval.scorers]\nwhole-check = whole_check_plugin:WholeCheck\n")
    return root


def _ce(args: list[str], path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), str(Path(__file__).resolve().parents[1])])}
    return subprocess.run([sys.executable, "-m", "construct_eval.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300)  # fmt: skip


def test_a_scorer_declared_by_an_installed_distribution_is_a_command_and_runs_end_to_end(tmp_path):
    path = _distribution(tmp_path / "site")
    listed = _ce(["--help"], path)
    assert listed.returncode == 0 and "whole-check" in listed.stdout, listed.stderr[-500:]
    run = injected_run(tmp_path / "run", 16, 0.4)
    with ScriptedServer() as server:
        made = _ce(["whole-check", "--run", str(run.path), "--base-url", server.base_url, "--model", "m",
                    "--no-cache", "--quiet"], path)  # fmt: skip
    assert made.returncode == 0, made.stderr[-1500:]
    calls = run.read("whole_checks")
    assert len(calls) == len(run.read("outputs")) and all(c["rating"] is not None for c in calls)
    rows = [json.loads(x) for x in run.file("scores").read_text().splitlines()]
    assert {r["scorer"] for r in rows} >= {"whole-check"}
    evaluated = _ce(["evaluate", "--run", str(run.path)], path)
    assert evaluated.returncode == 0, evaluated.stderr[-1500:]
    detection = (run.path / "metrics" / "detection.csv").read_text()
    assert "whole-check" in detection


def test_a_broken_entry_point_is_named(tmp_path):
    path = _distribution(tmp_path / "site")
    (path / "whole_check_plugin-0.1.dist-info" / "entry_points.txt").write_text(
        "[construct_eval.scorers]\nwhole-check = whole_check_plugin:NoSuchClass\n"
    )
    failed = _ce(["--help"], path)
    assert failed.returncode != 0
    assert "entry point 'whole-check'" in failed.stderr and "whole-check-plugin" in failed.stderr


def test_the_usage_guide_declares_the_plugin_as_this_test_does():
    """docs/usage.md's entry point is the one the throwaway distribution declares, under the group
    the command line reads."""
    from construct_eval.judging.stage import ENTRY_POINT_GROUP

    guide = (Path(__file__).resolve().parents[1] / "docs" / "usage.md").read_text()
    assert f'[project.entry-points."{ENTRY_POINT_GROUP}"]' in guide
    assert 'whole-check = "whole_check_plugin:WholeCheck"' in guide and "tests/test_scorer_plugins.py" in guide
