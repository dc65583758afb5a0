"""The study scripts (construct_eval.studies) that print published tables run, and print what is committed."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from construct_eval.data.runs import RunDir
from construct_eval.serving.scripted_server import ScriptedServer
from tests.conftest import env_without_proxy

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "runs"
STUDIES = ROOT / "construct_eval" / "studies"


def _run(name: str, *args: str) -> str:
    """What ``python -m construct_eval.studies.NAME ARGS`` prints."""
    out = subprocess.run(
        [sys.executable, "-m", f"construct_eval.studies.{name}", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    return out.stdout


def _script(name: str) -> ModuleType:
    """The study module construct_eval.studies.NAME (its functions, not its output)."""
    return importlib.import_module(f"construct_eval.studies.{name}")


def _study(script: str, env: dict[str, str], *, timeout: int) -> str:
    """A study's shell script (construct_eval/studies/SCRIPT), run to its end; its log on success."""
    done = subprocess.run(
        ["bash", str(STUDIES / script)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def test_null_split_prints_the_committed_table():
    assert _run("null_split") == (RUNS / "null_split.md").read_text()


def test_natural_judging_prints_the_committed_table():
    """The study's judging, method by method: what the run's audit files hold now."""
    table = _run("natural_judging")
    assert table == (RUNS / "natural_judging.md").read_text()
    assert "| every method above |" in table  # the documents the paper's comparison can use


def test_natural_error_patterns_prints_the_committed_table():
    assert _run("natural_error_patterns") == (RUNS / "natural_error_patterns.md").read_text()


def test_natural_error_patterns_splits_the_second_notices_by_how_they_name_the_contact(tmp_path):
    """On a labelled run of ``shipping_notice_v2`` (errors planted, as a user makes one), a row per
    phrasing whose counts add up to the run's notices and its wrong contacts."""
    from construct_eval.cli import main

    run_dir = tmp_path / "natural-synthetic-shipping_notice_v2-x"
    inject = ["inject", "--run", str(run_dir), "--dataset", "synthetic", "--synthetic-kinds", "shipping_notice_v2"]
    assert main([*inject, "--n", "60", "--doc-error-rate", "0.5"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    module = _script("natural_error_patterns")
    rows = module.phrasing_rows(run_dir)
    labels = [json.loads(line) for line in (run_dir / "labels.jsonl").read_text().splitlines()]
    wrong_contacts = sum(any(f["wrong"] for f in r["fields"] if f["path"] == "destination.contact") for r in labels)
    assert len(rows) >= 4 and sum(r["parsed notices"] for r in rows) == 60
    assert sum(int(r["`destination.contact` wrong"].split()[0]) for r in rows) == wrong_contacts
    assert sum(int(r["notice wrong"].split()[0]) for r in rows) == sum(r["wrong"] for r in labels)
    assert module.phrasing_rows(RUNS / "natural-synthetic-shipping_notice-qwen2.5-coder-1.5b-package") == []


def test_the_contact_rule_reads_the_person_a_notice_addresses_and_flags_an_output_without_its_contact(tmp_path):
    """The rule's name is the contact exactly where a v2 notice names it in the salutation or an
    Attn line (over 300 notices); outputs equal to the truth are never flagged; an output whose
    contact is taken out is flagged where the notice addresses its contact, and --import stores
    the rule as a document scorer on every parsed document."""
    from construct_eval.cli import main
    from construct_eval.data.datasets.synthetic import contact_phrasing, generate

    rule = _script("contact_rule")
    for record in generate(300, seed=5, kinds=["shipping_notice_v2"]).records:
        contact = record.ground_truth["destination"]["contact"]
        addressed = contact is not None and contact_phrasing(record.text, contact) in ("salutation", "attention")
        assert rule.addressed_person(record.text) == (contact if addressed else None), record.id
    run_dir = tmp_path / "v2"
    inject = ["inject", "--run", str(run_dir), "--dataset", "synthetic", "--synthetic-kinds", "shipping_notice_v2"]
    assert main([*inject, "--n", "40", "--doc-error-rate", "0"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    run = RunDir(run_dir, create=False)
    assert rule.flags(run) and not any(rule.flags(run).values())  # every output is the truth
    notices = generate(40, seed=0, kinds=["shipping_notice_v2"]).records  # inject's default seed
    rows = []
    for r in notices:  # a generator's outputs: the truth with the contact left out
        output = json.loads(json.dumps(r.ground_truth))
        output["destination"]["contact"] = None
        rows.append({"id": r.id, "sample": 0, "output": output, "state": "parsed"})
    (run_dir / "outputs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["label", "--run", str(run_dir)]) == 0
    expected = {r.id: rule.addressed_person(r.text) is not None for r in notices}
    assert rule.flags(run) == expected and 0 < sum(expected.values()) < 40
    assert rule.main([str(run_dir), "--import"]) == 0
    scores = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text().splitlines()]
    assert {r["id"]: r["score"] == 0 for r in scores if r["scorer"] == rule.SCORER} == expected


def test_table_fields_writes_the_committed_tables(tmp_path):
    """construct_eval.studies.table_fields, run afresh into a temporary folder, writes what is committed."""
    _run(
        "table_fields",
        str(RUNS / "natural-data_table_rebuild-qwen2.5-coder-1.5b-benchmark"),
        str(tmp_path / "table_fields"),
    )
    for suffix in (".csv", ".md"):
        assert (tmp_path / f"table_fields{suffix}").read_text() == (RUNS / f"table_fields{suffix}").read_text()


def test_status_prints_a_row_for_every_recorded_run():
    table = _run("status")
    for run in sorted(p for p in RUNS.iterdir() if (p / "outputs.jsonl").exists()):
        assert f"`{run.name}`" in table, run.name


def test_the_judge_study_report_is_what_the_script_prints():
    assert _run("judge_study_report") == (RUNS / "judge_study.md").read_text()


@pytest.mark.slow
@pytest.mark.shared_data
def test_the_near_miss_study_runs_end_to_end_on_the_scripted_server_and_resumes(tmp_path, shared_data):
    """The long study's script, pointed at the scripted server with a few documents: every part
    writes its rows, the near misses are recorded in run.json, and a rerun makes no call."""
    env = env_without_proxy()
    runs = tmp_path / "runs"
    with ScriptedServer() as server:
        env.update(
            PYTHON=sys.executable, RUNS_DIR=str(runs), BASE_URL=server.base_url, SERVE="0", TABLES="0",
            N_FIN="3", N_SYN="2", DATA_DIR=str(shared_data),
        )  # fmt: skip

        def study() -> str:
            return _study("near_miss_study.sh", env, timeout=600)

        study()
        calls_first = len(server.requests)
        fin, syn = runs / "financial_ner-sample3-nearmiss30", runs / "synthetic2-nearmiss30"
        counts = {}
        for run in (fin, syn):
            meta = json.loads((run / "run.json").read_text())
            assert meta["generator"]["config"]["near_miss_share"] == 0.5
            assert "planted" in meta["generator"]
            judgments = [json.loads(line) for line in (run / "judgments.jsonl").read_text().splitlines()]
            modes = Counter((j["mode"], j["constrained"]) for j in judgments)
            docs = len((run / "records.jsonl").read_text().splitlines())
            assert modes[("doc", "grammar:rating-only")] == docs and modes[("doc", "none")] == docs
            assert modes[("field", "grammar:rating-only")] >= docs
            assert all(j["parse_rule"] == "rating_prefix" for j in judgments)
            verdicts = (run / "verdicts.jsonl").read_text().splitlines()
            assert len(verdicts) == docs + modes[("field", "grammar:rating-only")]
            counts[run] = (len(judgments), len(verdicts))
        assert "nothing answers" not in study()
        assert len(server.requests) == calls_first  # resumed: no call made twice
        for run, (n_judgments, n_verdicts) in counts.items():
            assert len((run / "judgments.jsonl").read_text().splitlines()) == n_judgments
            assert len((run / "verdicts.jsonl").read_text().splitlines()) == n_verdicts


@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.parametrize("by_doc", ["0", "1"], ids=["part_by_part", "document_by_document"])
def test_the_natural_error_study_runs_every_part_on_the_scripted_server_and_resumes(tmp_path, shared_data, by_doc):
    """natural_study.sh with a few documents against the scripted server: generation until both
    classes exist (or the sample is used up), the judge's four parts, the generator's samples,
    the fourth dataset's rebuild (generated, labelled, judged) and the tables; a rerun makes no
    call and adds no row. With BY_DOC=1 the judge's parts and the samples take one document at a
    time: each document's calls come in one unbroken block; FROM=2 first leaves out the first.
    The parts BY_DOC does not change (the rebuild D and the tables E) run in the part-by-part case
    only: run twice, they would check the same code on the same calls."""
    pytest.importorskip("statsmodels", reason="the data-table rebuild needs the [tables] extra (statsmodels)")
    env = env_without_proxy()
    runs = tmp_path / "runs"
    with ScriptedServer() as server:
        env.update(
            PYTHON=sys.executable, RUNS=str(runs), BASE_URL=server.base_url, DATA_DIR=str(shared_data),
            SAMPLE="4", STEP="2", WANT_WRONG="1", WANT_RIGHT="1", REFLECT_DOCS="2", SAMPLES="2",
            CONSISTENCY_DOCS="2", TABLES="2", LOG_DIR=str(tmp_path), ORDER="balanced", BATCH="1", BY_DOC=by_doc,
        )  # fmt: skip
        if by_doc == "1":
            env["PARTS"] = "A,B1,B2,B3,B4,C"  # what BY_DOC changes; D and E as in the part-by-part case

        def study(**extra: str) -> str:
            return _study("natural_study.sh", {**env, **extra}, timeout=900)

        run = runs / "natural-financial_ner-qwen2.5-coder-1.5b-benchmark"
        if by_doc == "1":  # FROM=2 starts at the order's second document: the first gets no judge call
            study(FROM="2")
            labels_rows = [json.loads(line) for line in (run / "labels.jsonl").read_text().splitlines()]
            first = _script("balanced_order").balanced_order(labels_rows)[0]
            judged = {json.loads(line)["doc_id"] for line in (run / "judgments.jsonl").read_text().splitlines()}
            assert first not in judged and judged
        study()
        calls_first = len(server.requests)
        tables = runs / "natural-data_table_rebuild-qwen2.5-coder-1.5b-benchmark"
        sizes = {}
        built = ((run, None), (tables, 2)) if by_doc == "0" else ((run, None),)
        for folder, docs in built:
            meta = json.loads((folder / "run.json").read_text())
            assert meta["dataset"]["source"]["prompt"] == "benchmark"
            outputs = [json.loads(line) for line in (folder / "outputs.jsonl").read_text().splitlines()]
            firsts = [o for o in outputs if not o.get("sample")]
            assert docs is None or len(firsts) == docs
            judgments = [json.loads(line) for line in (folder / "judgments.jsonl").read_text().splitlines()]
            modes = Counter((j["mode"], j["constrained"]) for j in judgments)
            assert modes[("doc", "grammar:rating-only")] == len(firsts)
            assert modes[("field", "grammar:rating-only")] >= len(firsts)
            assert modes[("doc", "none")] == (len(firsts) if folder == run else 0)  # the free recipe: the study only
            assert (folder / "metrics" / "detection.csv").exists() == (by_doc == "0")  # E: part by part only
            sizes[folder] = _lines(folder)
        n_docs = sizes[run]["outputs.jsonl"]
        labels = json.loads((run / "run.json").read_text())["labels"]
        assert n_docs in (2, 4) and (n_docs == 4 or 1 <= labels["documents_wrong"] <= n_docs - 1)
        samples = Counter(json.loads(line)["id"] for line in (run / "samples.jsonl").read_text().splitlines())
        assert len(samples) == 2 and set(samples.values()) == {2}  # SAMPLES for CONSISTENCY_DOCS documents
        scorers = {json.loads(line)["scorer"] for line in (run / "scores.jsonl").read_text().splitlines()}
        assert {"token_logprob", "consistency", "reflection"} <= scorers  # C's consistency scores: C, not E
        assert sizes[run]["verdicts.jsonl"] > n_docs and sizes[run]["reflections.jsonl"] > 0
        reflected = {json.loads(line)["id"] for line in (run / "reflections.jsonl").read_text().splitlines()}
        labels_rows = [json.loads(line) for line in (run / "labels.jsonl").read_text().splitlines()]
        assert reflected == set(_script("balanced_order").balanced_order(labels_rows)[:2])  # ORDER=balanced
        assert set(samples) == reflected  # self-consistency on the reflection's documents
        if by_doc == "0":
            assert (run / "metrics" / "calibration.csv").exists() and list((run / "metrics").glob("paired_*.csv"))
            assert (run / "metrics" / "paper_comparison.csv").exists()  # the paper's four methods side by side
        blocks = _document_blocks(server.requests, run, shared_data)
        if by_doc == "1":
            assert len(blocks) == n_docs and len(set(blocks)) == len(blocks)  # one unbroken block a document
        else:
            assert len(set(blocks)) == n_docs < len(blocks)  # part after part: each part takes every document
        study()
        assert len(server.requests) == calls_first  # resumed: no call made twice
        for folder, files in sizes.items():
            assert _lines(folder) == files


def test_the_balanced_order_alternates_wrong_and_right_documents_then_the_rest():
    """The judging order of a natural-error study: wrong and right alternately in the run's order,
    the larger class's rest after; unparsed outputs are left out; batches and --first cut it."""
    module = _script("balanced_order")
    labels = [
        {"id": "r1", "wrong": False}, {"id": "w1", "wrong": True}, {"id": "r2", "wrong": False},
        {"id": "x", "wrong": True, "parse_failed": True}, {"id": "r3", "wrong": False}, {"id": "w2", "wrong": True},
        {"id": "r4", "wrong": False},
    ]  # fmt: skip
    assert module.balanced_order(labels) == ["w1", "r1", "w2", "r2", "r3", "r4"]
    run = RUNS / "natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package"
    lines = _run("balanced_order", str(run), "--batch", "7", "--first", "30").splitlines()
    ids = [i for line in lines for i in line.split(",")]
    assert [len(line.split(",")) for line in lines] == [7, 7, 7, 7, 2] and len(set(ids)) == 30
    recorded = [json.loads(line) for line in (run / "labels.jsonl").read_text().splitlines()]
    wrong = {r["id"] for r in recorded if r["wrong"]}
    assert [i in wrong for i in ids] == [True, False] * 15


def _document_blocks(requests: list, run: Path, data_dir: Path) -> list[str]:
    """The run's documents in the order the calls from the judge's first on took them, a document
    once per unbroken block of its calls (the generator's samples included; calls on no document
    of the run, such as the data tables', are left out)."""
    from itertools import groupby

    from construct_eval.judging.prompts import SYSTEM_PROMPT

    items, _ = RunDir(run, create=False).judge_inputs(data_dir=str(data_dir))
    texts = {item.doc_id: item.request for item in items}
    contents = ["\n".join(str(m.get("content")) for m in r.body.get("messages", [])) for r in requests]
    first_judge = next(i for i, r in enumerate(requests) if r.body["messages"][0]["content"] == SYSTEM_PROMPT)
    ids = [next((d for d, text in texts.items() if text in c), None) for c in contents[first_judge:]]
    return [d for d, _ in groupby(i for i in ids if i is not None)]


def _lines(folder: Path) -> dict[str, int]:
    """Rows per run file; provenance.jsonl records every command, a rerun's too."""
    return {f.name: len(f.read_text().splitlines()) for f in folder.glob("*.jsonl") if f.name != "provenance.jsonl"}
