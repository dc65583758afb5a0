"""The Python entry points run as their docstrings and the README document them."""

from __future__ import annotations

import pytest

from construct_eval import Endpoint, RunDir, judge_run
from construct_eval.judging.scoring import ScoringError
from construct_eval.serving.scripted_server import ScriptedServer
from tests.conftest import make_run


@pytest.mark.parametrize("modes", [None, "doc", "doc,fields", ("doc", "fields"), "fields-joint"])
def test_judge_run_takes_modes_in_every_documented_spelling(tmp_path, modes):
    """``judge_run(run, endpoint)`` with its default modes, and ``"doc,fields"`` as the package's
    docstring writes it (these raised 'unknown mode' before modes were normalised)."""
    make_run(tmp_path / "run", 2)
    run = RunDir(tmp_path / "run", create=False)
    with ScriptedServer() as server:
        endpoint = Endpoint(server.base_url, "qwen2.5-coder-1.5b")
        args = () if modes is None else (modes,)
        summary = judge_run(run, endpoint, *args, cache=False, progress=False)
    assert summary.tasks_planned > 0 and len(run.read("judgments")) >= summary.tasks_planned  # joint: a row a field


def test_judge_run_names_an_unknown_mode(tmp_path):
    run = make_run(tmp_path / "run", 1)
    with pytest.raises(ScoringError, match="unknown mode 'sections'"):
        judge_run(run, Endpoint("http://127.0.0.1:9/v1", "m"), "doc,sections", identify_server=False, cache=False)
