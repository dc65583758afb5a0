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


def test_the_package_docstring_example_runs_as_written():
    """The first block of ``construct_eval``'s docstring, executed with its names bound."""
    import construct_eval
    from construct_eval.serving.scripted_replies import default_judge
    from tests.conftest import SCHEMA, make_item
    from tests.construct_replies import RecordingJudge

    construct_judge = RecordingJudge()

    def script(req):  # CONSTRUCT's calls to its scripted judge, the 1-10 judge's to the default one
        text = req.body["messages"][-1]["content"]
        return construct_judge(req) if "untrustworthy AI" in text else default_judge(req)

    block = construct_eval.__doc__.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    code = "\n".join(line[4:] for line in block.splitlines())
    item = make_item(3)
    with ScriptedServer(script) as server:
        names = {"Endpoint": Endpoint, "text": item["request"], "schema": SCHEMA, "output": item["output"],
                 "base_url": server.base_url, "model": "qwen2.5-coder-1.5b"}  # fmt: skip
        exec(code, names)
    assert 0 < names["result"].score < 1 and set(names["result"].fields) == set(item["output"])
    assert names["doc_rating"] is not None and set(names["field_ratings"]) == set(item["output"])


def test_the_usage_guides_trust_example_runs_as_written():
    """docs/usage.md's CONSTRUCT example, executed as written against a scripted judge on its port."""
    import re
    from pathlib import Path

    from tests.conftest import SCHEMA, make_item
    from tests.construct_replies import RecordingJudge

    text = (Path(__file__).resolve().parents[1] / "docs" / "usage.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "import Endpoint, trust" in b)
    item = make_item(5)
    names = {"input_text": item["request"], "schema": SCHEMA, "generated_output": item["output"]}
    try:
        server = ScriptedServer(RecordingJudge(), port=8080)
        server.start()
    except (OSError, RuntimeError):
        pytest.skip("port 8080, which the guide's example names, is taken on this machine")
    try:
        exec(block, names)
    finally:
        server.stop()
    result = names["result"]
    assert result.reason is None and 0 < result.score < 1 and set(result.fields) == set(item["output"])


@pytest.mark.parametrize(
    "module",
    [
        "construct_eval.display.displays",
        "construct_eval.decide.thresholds",
        "construct_eval.numbers",
        "construct_eval.csv_tables",
    ],
)
def test_module_examples_run_as_written(module):
    """The ``>>>`` examples in a module's docstring are run, so a documented call cannot rot."""
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
