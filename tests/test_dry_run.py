"""Know the bill before paying it: ``score --dry-run`` plans, counts and prices without calling."""

from __future__ import annotations

import json
import re

import pytest

from construct_eval.cli import main
from construct_eval.serving.scripted_server import ScriptedServer


def _inject(tmp_path, n=8):
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", str(n)]) == 0
    return run_dir


def _numbers(text: str, label: str) -> int:
    return int(re.search(rf"{label}:? (?:about |at most )?(\d+)", text)[1])


def test_a_dry_run_calls_nothing_and_counts_what_resume_and_cache_save(tmp_path, capsys):
    run_dir = _inject(tmp_path)
    with ScriptedServer() as server:
        base = ["--run", str(run_dir), "--mode", "doc", "--base-url", server.base_url, "--model", "m"]
        base += ["--backend", "generic", "--max-tokens", "40", "--quiet"]
        assert main(["score", *base, "--dry-run", "--price-in", "1", "--price-out", "2"]) == 0
        first = capsys.readouterr().out
        assert not server.requests, "a dry run sends no chat request"
        assert _numbers(first, "calls to make") == 8 and "already done" in first
        tokens_in, tokens_out = _numbers(first, "input tokens"), _numbers(first, "output tokens")
        assert tokens_out == 8 * 40 and tokens_in > 8 * 100  # every prompt holds a document and an output
        cost = float(re.search(r"cost: at most ([\d.]+)", first)[1])
        from construct_eval.llm.budget import LOWEST_ESTIMATE_RATIO

        assert abs(cost - (tokens_in / LOWEST_ESTIMATE_RATIO * 1 + tokens_out * 2) / 1e6) < 1e-4
        recorded = [json.loads(line)["command"] for line in (run_dir / "provenance.jsonl").read_text().splitlines()]
        assert recorded == ["inject"], "a dry run writes nothing to the run, not even provenance"

        assert main(["score", *base, "--limit", "3"]) == 0  # three documents judged (and cached)
        capsys.readouterr()
        made = len(server.requests)
        assert main(["score", *base, "--dry-run"]) == 0
        second = capsys.readouterr().out
        assert len(server.requests) == made
        assert "3 already done" in second and _numbers(second, "calls to make") == 5
        assert "cost:" not in second  # no prices given: tokens only


def test_a_response_cache_hit_is_free_in_the_estimate(tmp_path, capsys):
    run_dir = _inject(tmp_path, n=4)
    other = tmp_path / "again"
    with ScriptedServer() as server:
        base = ["--mode", "doc", "--base-url", server.base_url, "--model", "m", "--backend", "generic", "--quiet"]
        assert main(["score", "--run", str(run_dir), *base]) == 0  # fills the cache
        ids = [json.loads(line)["id"] for line in (run_dir / "records.jsonl").read_text().splitlines()[:2]]
        argv = ["subset", "--run", str(run_dir), "--out", str(other), "--docs", ",".join(ids)]
        assert main([*argv, "--files", "records,outputs"]) == 0
        capsys.readouterr()
        assert main(["score", "--run", str(other), *base, "--dry-run"]) == 0
        out = capsys.readouterr().out
    assert _numbers(out, "calls to make") == 0 and "(and 2 answered by the response cache)" in out


def test_max_cost_exits_3_and_a_limit_without_prices_exits_2(tmp_path, capsys):
    """The command line's side of the spending limit (the library's: tests/test_stage_library.py)."""
    run_dir = _inject(tmp_path)
    with ScriptedServer() as server:
        base = ["score", "--run", str(run_dir), "--mode", "doc", "--base-url", server.base_url, "--model", "m"]
        base += ["--backend", "generic", "--max-tokens", "40", "--quiet", "--no-cache"]
        prices = ["--price-in", "1000", "--price-out", "1000"]  # 0.001 per token: a call costs about 1
        assert main([*base, *prices, "--max-cost", "4"]) == 3  # stopped at the limit
        err = capsys.readouterr().err
        assert "spending limit" in err and "rerun with a larger --max-cost" in err
        assert 0 < len(server.requests) < 8
        assert main([*base, "--max-cost", "5"]) == 2  # a limit without prices is refused
        assert "error: --max-cost needs --price-in and --price-out" in capsys.readouterr().err


def test_the_cost_ledger_counts_each_call_once_and_cached_calls_free(tmp_path, capsys):
    run_dir = _inject(tmp_path, n=4)
    with ScriptedServer() as server:
        opts = ["--base-url", server.base_url, "--model", "m", "--backend", "generic", "--quiet"]
        assert main(["score", "--run", str(run_dir), "--mode", "doc,fields-joint", *opts]) == 0
    assert main(["cost", "--run", str(run_dir), "--price-in", "1000", "--price-out", "2000"]) == 0
    rows = [json.loads(line) for line in (run_dir / "judgments.jsonl").read_text().splitlines()]
    calls = {r["call_id"]: r for r in rows}  # a joint call wrote one row per field: counted once
    with (run_dir / "metrics" / "cost.csv").open() as fh:
        import csv

        table = list(csv.DictReader(fh))
    total = table[-1]
    assert total["source"] == "total" and int(total["calls"]) == len(calls) < len(rows)
    tokens_in = sum(r["prompt_tokens"] for r in calls.values())
    tokens_out = sum(r["completion_tokens"] for r in calls.values())
    assert int(total["prompt_tokens"]) == tokens_in
    assert float(total["cost"]) == pytest.approx(tokens_in * 1e-3 + tokens_out * 2e-3, abs=1e-6)


def test_reflect_and_verdict_dry_runs_and_spending_limits(tmp_path, capsys):
    run_dir = _inject(tmp_path, n=4)
    with ScriptedServer() as server:
        opts = ["--run", str(run_dir), "--base-url", server.base_url, "--model", "m", "--backend", "generic"]
        opts += ["--quiet", "--no-cache"]
        assert main(["reflect", *opts, "--dry-run", "--price-in", "1", "--price-out", "1"]) == 0
        out = capsys.readouterr().out
        assert not server.requests and "dry run (reflection)" in out
        from construct_eval.scorers.reflection import PROMPTS

        assert _numbers(out, "calls to make") == 4 * len(PROMPTS)  # every reflection prompt per document
        assert main(["verdict", *opts, "--mode", "doc", "--price-in", "1000", "--price-out", "1000",
                     "--max-cost", "2"]) == 3  # fmt: skip
        assert "spending limit" in capsys.readouterr().err
        made = len(server.requests)
        rows = [json.loads(line) for line in (run_dir / "verdicts.jsonl").read_text().splitlines()]
        assert 0 < len(rows) == made < 4
        assert main(["verdict", *opts, "--mode", "doc", "--price-in", "1000", "--price-out", "1000",
                     "--max-cost", "1000"]) == 0  # fmt: skip
        rows = [json.loads(line) for line in (run_dir / "verdicts.jsonl").read_text().splitlines()]
        assert len(rows) == 4 == len({r["key"] for r in rows}) == len(server.requests)


@pytest.mark.slow
def test_a_packaged_model_counts_its_own_tokens(tmp_path, capsys):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (make venv builds it)")
    from construct_eval.serving.models import MODELS, assemble

    name = "smollm2-135m"
    assemble(MODELS[name])  # into this test's own cache, where the dry run looks
    run_dir = _inject(tmp_path, n=3)
    with ScriptedServer() as server:
        argv = ["score", "--run", str(run_dir), "--mode", "doc", "--base-url", server.base_url, "--model", name]
        assert main([*argv, "--backend", "generic", "--dry-run", "--price-in", "1", "--price-out", "1"]) == 0
    out = capsys.readouterr().out
    assert f"counted by {name}'s tokenizer" in out and not server.requests
    assert int(re.search(r"input tokens: (\d+)", out)[1]) > 3 * 100  # three prompts with a document each
