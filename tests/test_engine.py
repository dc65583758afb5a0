"""The one call engine every model-calling stage runs on (``llm.engine.run_keyed_calls``).

The judge, reflection, verdicts and generation all go through it: one budget reserve/settle,
rows appended as each call finishes, the plan order kept on a one-slot server, the endpoint's
refusal and the spending limit raised after what finished is written. The generation tests
call the library over real HTTP (the scripted server), not the command line.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import pytest

from construct_eval.data.datasets import load_dataset
from construct_eval.data.generate import GenerationConfig, generate_run
from construct_eval.data.runs import RunDir
from construct_eval.llm.budget import Budget, BudgetReached
from construct_eval.llm.client import ChatRequest, Endpoint, EndpointError, make_client
from construct_eval.llm.engine import Spending, StageError, reply_tokens, run_keyed_calls
from construct_eval.serving.scripted_server import Reply, ScriptedServer, Status


@dataclass(frozen=True)
class Task:
    key: str
    doc: str


def _run(tasks, done=(), *, call, concurrency=1, spending=None):
    written: list[dict] = []

    def append(rows):
        written.extend(rows)
        return len(rows)

    planned, n = asyncio.run(
        run_keyed_calls(
            tasks,
            done,
            call,
            append,
            concurrency=concurrency,
            progress=False,
            desc="test",
            where=lambda t: f"document {t.doc!r}",
            spending=spending,
            announce=False,
        )
    )
    return planned, n, written


def test_one_slot_keeps_the_plan_order_and_skips_done_keys():
    tasks = [Task(f"k{i}", f"d{i // 2}") for i in range(6)]
    started: list[str] = []
    slot = asyncio.Semaphore(1)  # a one-slot server: calls beyond it queue

    async def call(t: Task) -> dict:
        async with slot:
            started.append(t.key)
            await asyncio.sleep(0.001)
            return {"key": t.key}

    planned, n, written = _run(tasks, {"k1"}, call=call, concurrency=1)
    assert planned == 5 == n
    assert started == ["k0", "k2", "k3", "k4", "k5"]  # a document's calls back to back, as planned
    assert [r["key"] for r in written] == started


def test_a_failure_names_its_document_after_the_finished_rows_are_written():
    tasks = [Task(f"k{i}", f"d{i}") for i in range(4)]

    async def call(t: Task) -> dict:
        if t.key == "k2":
            raise KeyError("no such field")
        return {"key": t.key}

    written: list[dict] = []
    with pytest.raises(StageError, match=r"document 'd2': 'no such field'"):
        asyncio.run(
            run_keyed_calls(tasks, (), call, lambda rows: written.extend(rows) or len(rows), concurrency=1,
                            progress=False, desc="t", where=lambda t: f"document {t.doc!r}", announce=False)
        )  # fmt: skip
    assert [r["key"] for r in written] == ["k0", "k1"]  # what finished is kept; nothing after the failure


def test_spending_reserves_the_worst_case_and_settles_at_what_the_reply_used():
    tasks = [Task(f"k{i}", f"d{i}") for i in range(5)]
    request = ChatRequest(messages=[{"role": "user", "content": "x" * 400}], max_tokens=100)
    budget = Budget(max_cost=0.6, price_in=1000, price_out=1000)  # 0.001 per token

    async def call(t: Task) -> dict:
        return {"key": t.key, "prompt_tokens": 100, "completion_tokens": 50, "cached": t.key == "k0"}

    with pytest.raises(BudgetReached):
        _run(tasks, call=call, spending=Spending(budget, lambda _t: request))
    # k0 was free (cached); each other call cost 0.15 after reserving its worst case (about 0.23),
    # so k4 (0.45 spent + 0.23 > 0.6) is never sent
    assert budget.reserved == pytest.approx(0.0)
    assert budget.calls == 4 and budget.spent == pytest.approx(0.45)


def test_reply_tokens_reads_stage_rows_and_generation_rows():
    assert reply_tokens([{"prompt_tokens": 3, "completion_tokens": 4}]) == (3, 4)
    assert reply_tokens([{"usage": {"prompt_tokens": 5, "completion_tokens": 6}, "cached": False}]) == (5, 6)
    assert reply_tokens([{"prompt_tokens": 3, "cached": True}]) is None
    assert reply_tokens([]) is None


def _generate(run: RunDir, server: ScriptedServer, n: int = 4, **kw):
    dataset = load_dataset("synthetic", n=n, seed=3)

    async def go():
        endpoint = Endpoint(server.base_url, "gen", backend="generic")
        async with make_client(endpoint, concurrency=1, cache=False, max_retries=0) as c:
            return await generate_run(run, dataset, c, GenerationConfig(samples=1), progress=False, **kw)

    return asyncio.run(go()), dataset


def test_generation_runs_on_the_engine_and_a_refusing_endpoint_keeps_what_finished(tmp_path):
    calls = {"n": 0}

    def script(req):
        calls["n"] += 1
        return Status(401) if calls["n"] == 4 else Reply(json.dumps({"a": 1}))

    run = RunDir(tmp_path / "run")
    with ScriptedServer(script) as server:
        with pytest.raises(EndpointError):
            _generate(run, server)
        sent = len(server.requests)
    finished = len(run.read("outputs")) + len(run.read("samples"))
    # every call answered is written: the three before the refusal and the one that was already
    # waiting for the server's slot; nothing else is sent
    assert finished == sent - 1 == 4
    with ScriptedServer(lambda req: Reply(json.dumps({"a": 1}))) as server:
        summary, _ = _generate(run, server)
        assert len(server.requests) == 8 - finished  # the rerun makes only the rest
    assert summary.written + summary.samples_written == 8 - finished
    keys = [(r["id"], r["sample"]) for r in run.read("outputs") + run.read("samples")]
    assert len(keys) == len(set(keys)) == 8


def test_generation_spending_limit_counts_usage_of_generation_rows(tmp_path):
    run = RunDir(tmp_path / "run")
    spend = Budget(max_cost=3.0, price_in=1000, price_out=1000)
    with ScriptedServer() as server, pytest.raises(BudgetReached):
        _generate(run, server, spend=spend)
    rows = run.read("outputs") + run.read("samples")
    used = sum(r["usage"]["prompt_tokens"] + r["usage"]["completion_tokens"] for r in rows) * 1000 / 1e6
    assert 0 < len(rows) == len(server.requests) < 8
    assert spend.spent == pytest.approx(used) and spend.reserved == pytest.approx(0.0)
