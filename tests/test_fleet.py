"""A fleet of replicas behind one client: least-loaded routing, a document's calls kept on one
replica, a failing replica set aside, and the replica recorded in every judgment row."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

from construct_eval.cli import main
from construct_eval.llm.fleet import Fleet
from construct_eval.serving.models import free_port
from construct_eval.serving.scripted_server import ScriptedServer


def test_routing_rules():
    fleet = Fleet(["a", "b", "c"], set_aside_after=2, set_aside_s=60)
    first = fleet.pick("doc-1")
    fleet.started(first)
    assert fleet.pick("doc-2") != first  # least loaded
    assert fleet.pick("doc-1") == first  # its document's replica, although busier
    fleet.finished(first, ok=False)  # one failure: still in use
    assert fleet.pick("doc-1") == first
    fleet.started(first)
    fleet.finished(first, ok=False)  # a second in a row: set aside, its documents go elsewhere
    assert fleet.pick("doc-1") != first
    assert fleet.pick("doc-9", exclude=[i for i in range(3) if i != first]) == first  # nothing else left


def test_score_on_a_fleet_keeps_documents_together_and_survives_a_dead_replica(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "12"]) == 0
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    with ScriptedServer() as a, ScriptedServer() as b, ScriptedServer() as c:
        opts = ["--mode", "doc,fields", "--base-url", a.base_url, "--model", "m", "--backend", "generic"]
        opts += ["--replicas", f"{b.base_url},{c.base_url},{dead}", "--constrained", "none", "--quiet"]
        opts += ["--no-cache", "--endpoint-id", "one-model", "--timeout", "5"]
        assert main(["score", "--run", str(run_dir), *opts]) == 0
        served = [len(s.requests) for s in (a, b, c)]
    rows = [json.loads(x) for x in (run_dir / "judgments.jsonl").read_text().splitlines()]
    assert rows and all(r["status"] == "ok" for r in rows), Counter(r.get("reason") for r in rows)
    by_doc = defaultdict(set)
    for r in rows:
        by_doc[r["doc_id"]].add(r["replica"])
    assert all(len(replicas) == 1 for replicas in by_doc.values()), "a document's calls stay on one replica"
    assert dead.rstrip("/") not in {r["replica"] for r in rows}
    assert min(served) > 0 and sum(served) == len(rows)  # every live replica took documents


def test_a_fleet_gets_documents_interleaved_and_one_server_keeps_plan_order():
    from types import SimpleNamespace

    from construct_eval.judging.scoring import interleave_documents

    tasks = [SimpleNamespace(item=SimpleNamespace(doc_id=d), n=k) for d in "abcd" for k in range(3)]
    order = [(t.item.doc_id, t.n) for t in interleave_documents(tasks, 2)]
    assert order[:4] == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]  # two workers, two documents at once
    assert sorted(order) == sorted((t.item.doc_id, t.n) for t in tasks)
    assert [d for d, _ in order if d in "ac"] == ["a"] * 3 + ["c"] * 3  # a queue keeps documents together
    assert [(t.item.doc_id, t.n) for t in interleave_documents(tasks, 1)] == [(t.item.doc_id, t.n) for t in tasks]
