"""The demos end to end over real HTTP (a scripted server standing in for the local model): ``make demo``
(a few documents live, then the recorded study's answers read from its stored tables) and ``make
demo-full`` (``--full``: the whole pipeline on the model's own runs)."""

from __future__ import annotations

import json
import re

import pytest

from construct_eval.demo import main
from construct_eval.serving.scripted_server import Reply, ScriptedServer, default_judge
from tests.construct_replies import reply_for


def generator_or_judge(req):
    """Generation requests (the synthetic system prompt) get a JSON object; judge requests a rating."""
    system = req.body["messages"][0]["content"]
    if system.startswith("You extract structured data"):
        text = json.dumps({"invoice_number": "INV-0"})
        return Reply(text, logprobs=[{"token": c, "logprob": -0.1, "top_logprobs": []} for c in text])
    return default_judge(req)


def live_handler(req):
    """The default demo's three kinds of call: generation, the card's judge, and CONSTRUCT's
    reflections (TLM's calls carry the request as their one user message)."""
    messages = req.body["messages"]
    if len(messages) == 1 and messages[0]["role"] == "user":
        return Reply(reply_for(req.body))
    return generator_or_judge(req)


RECORDED_HEADINGS = (
    "## Which score finds the wrong fields? (recorded)",
    "## What does each rating mean? (recorded)",
    "## Does the order sway the judge? (recorded)",
    "## What would a policy auto-accept? (recorded)",
)


def test_demo_runs_live_then_reads_the_recorded_answers_and_resumes_with_no_call(tmp_path):
    """``make demo``: generation, labels, judging per document and per field and CONSTRUCT's trust
    score for one output, each stage timed with the load beside it, then the four recorded answers;
    a rerun makes no call and writes the same report apart from its times."""
    out = tmp_path / "demo"
    with ScriptedServer(live_handler) as server:
        argv = ["--out", str(out), "--base-url", server.base_url, "--model", "scripted", "--n", "3", "--no-cache"]
        assert main(argv) == 0
        made = len(server.requests)
        first = _report_without_times(out / "report.md")
        assert main(argv) == 0
        assert len(server.requests) == made, "a rerun resumes: no call is made twice"
    report = (out / "report.md").read_text()
    assert _report_without_times(out / "report.md") == first
    assert "## Live: 3 synthetic documents, extracted and judged now by `scripted`" in report
    assert "### One output, field by field: `synthetic-" in report
    for heading in RECORDED_HEADINGS:
        assert heading in report
    words = re.sub(r"\[`[^`]*`\]\([^)]*\)", "", report)  # the links to stored tables name their files
    for internal in (r"\bnan\b", "auroc_low", "variant_b", "sec:r-s-o", "judge-doc", r"\bNone\b"):
        assert not re.search(internal, words), internal  # a reader's words, not the tables' names
    record = json.loads((out / "demo.json").read_text())
    names = [s["name"] for s in record["stages"]]
    assert names[0].startswith("start-up") and names[1].startswith("reach the endpoint")
    assert names[-1].startswith("the recorded study's answers")
    assert any(n.startswith("judge per document and per field") for n in names)
    assert record["total_s"] > 0 and len(record["load_start"]) == 3 and len(record["load_end"]) == 3
    assert f"{record['total_s'] / 60:.1f} min" in report and "load average" in report
    trust = json.loads((out / "live" / "trust.json").read_text())
    assert trust["calls"] == 5 and trust["preset"] == "medium" and 0 < trust["score"] < 1
    judgments = [json.loads(x) for x in (out / "live" / "judgments.jsonl").read_text().splitlines()]
    assert {j["mode"] for j in judgments} == {"doc", "field"}
    assert sum(j["mode"] == "doc" for j in judgments) == 3
    assert (out / "cells.csv").read_text().count("\n") > 100


@pytest.mark.slow
def test_demo_on_the_embedded_model(tmp_path):
    """``make demo`` as a fresh clone runs it, on one document: the packaged SmolLM2 served by
    llama.cpp generates, is judged per document and per field, and CONSTRUCT makes its 5 calls;
    each live stage records the calls it made."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (make venv builds it)")
    from construct_eval.serving.models import MODELS, SMALLEST_MODEL, assemble

    model = assemble(MODELS[SMALLEST_MODEL], tmp_path / "models", wheel_dir=tmp_path / "wheels")
    out = tmp_path / "demo"
    assert main(["--out", str(out), "--model", str(model), "--n", "1"]) == 0
    record = json.loads((out / "demo.json").read_text())
    stages = {s["name"].split(":")[0].split(" (")[0]: s for s in record["stages"]}
    assert [s["name"].split(" ")[0] for s in record["stages"][:3]] == ["start-up:", "assemble", "start"]
    assert stages["generate JSON for 1 synthetic document"]["calls"] == 1
    assert stages["CONSTRUCT's trust score for one output"]["calls"] in (0, 5)  # 0: the output did not parse
    report = (out / "report.md").read_text()
    assert "## Live: 1 synthetic document, extracted and judged now by `smollm2-135m`" in report
    for heading in RECORDED_HEADINGS:
        assert heading in report


def test_every_number_of_the_recorded_part_is_a_cell_of_a_stored_table():
    """The recorded sections quote the stored tables through a ledger: each quoted text is its cell
    read again and formatted, every table it names is under results/runs, and the sections hold no
    decimal number the ledger did not quote."""
    from construct_eval.demo.recorded import recorded_sections
    from construct_eval.reports.cells import format_value

    lines, ledger = recorded_sections()
    assert ledger.quotes, "the recorded part quotes no cell"
    for cell, fmt, text in ledger.quotes:
        assert cell.table.startswith("results/runs/")
        if fmt == "text":
            assert cell.raw(ledger.root) == text
        else:
            assert format_value(cell.value(ledger.root), fmt) == text, (cell, fmt, text)
    number = r"[+-]?\d+\.\d+%?"
    quoted = {x for _, _, text in ledger.quotes for x in re.findall(number, text)}
    prose = "\n".join(line for line in lines if not line.startswith("|"))
    written = set(re.findall(rf"(?<![\w.]){number}(?![\dBb])", prose))  # "1.5B" names a model
    assert written - {"0.5"} <= quoted, written - quoted  # 0.5: chance, in the AUROC's definition
    text = "\n".join(lines)
    assert not re.search(r"\bnan\b|n/a", text)


def test_the_recorded_demo_report_is_what_todays_code_writes(tmp_path):
    """results/demo/report.md is today's report of the recorded live run and the stored tables: a
    stale one (the code or a stored table changed since) fails here. Rewrite it with
    ``python -m construct_eval.demo --out results/demo --report-only``."""
    import shutil
    from pathlib import Path

    recorded = Path(__file__).resolve().parents[1] / "results" / "demo"
    out = tmp_path / "demo"
    shutil.copytree(recorded, out)
    assert main(["--out", str(out), "--report-only"]) == 0
    now = (out / "report.md").read_text()
    then = (recorded / "report.md").read_text()
    assert _report_without_comparison(now) == _report_without_comparison(then)
    assert (out / "cells.csv").read_text() == (recorded / "cells.csv").read_text()


def test_the_readme_states_the_recorded_demos_time_model_and_load():
    """The README's demo paragraph quotes the recorded demo's wall time, its model and documents,
    and the load beside the time (results/demo/demo.json): a re-recorded demo updates it."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    record = json.loads((root / "results" / "demo" / "demo.json").read_text())
    readme = " ".join((root / "README.md").read_text().split())
    start = readme.index("`make demo` has")
    paragraph = readme[start : readme.index("## ", start)]
    assert f"{record['total_s'] / 60:.1f} min" in paragraph
    assert (
        f"load average {record['load_start'][0]:.2f} at the start, {record['load_end'][0]:.2f} at the end" in paragraph
    )
    assert f"{record['n_docs']} synthetic documents" in paragraph
    assert record["model_text"].split()[0].removesuffix("-Instruct") in paragraph  # Qwen2.5-Coder-0.5B


def _report_without_comparison(text: str) -> str:
    return text.split("\n## Compared with the recorded demo")[0].split("\n_This is the recorded demo")[0]


def test_the_comparison_counts_the_live_values_and_quoted_cells_that_agree(tmp_path):
    """A demo beside its recorded run: every live value and quoted cell as recorded; a changed rating
    and a changed cell are each named with both values."""
    import shutil

    from construct_eval.demo import compare_with_recorded

    out = tmp_path / "now"
    with ScriptedServer(live_handler) as server:
        assert main(["--out", str(out), "--base-url", server.base_url, "--model", "scripted", "--n", "2"]) == 0
    recorded = tmp_path / "recorded"
    shutil.copytree(out, recorded)
    lines = compare_with_recorded(out, recorded)
    agree = [line for line in lines if line.startswith("**Live part:**")]
    assert agree and " as recorded" in agree[0]
    live, _, of = agree[0].removeprefix("**Live part:** ").partition(" of ")
    assert live == of.split()[0]
    assert any(line.startswith("**Recorded part:**") and "as in the recorded report." in line for line in lines)
    judgments = recorded / "live" / "judgments.jsonl"
    rows = [json.loads(x) for x in judgments.read_text().splitlines()]
    rows[0]["rating"] = 10 if rows[0]["rating"] != 10 else 1
    judgments.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cells = (recorded / "cells.csv").read_text().splitlines()
    cells[1] = cells[1].rsplit(",", 1)[0] + ",0.999"
    (recorded / "cells.csv").write_text("\n".join(cells) + "\n")
    lines = compare_with_recorded(out, recorded)
    assert any(line.startswith(f"| {rows[0]['doc_id']} {rows[0]['field']} rating |") for line in lines)
    assert any("stored tables changed" in line for line in lines)
    assert any(line.startswith("- ") and "0.999 recorded" in line for line in lines)


def test_a_trust_score_whose_calls_failed_is_made_again_and_an_unreadable_one_is_kept(tmp_path):
    out = tmp_path / "demo"
    with ScriptedServer(live_handler) as server:
        argv = ["--out", str(out), "--base-url", server.base_url, "--model", "scripted", "--n", "2", "--no-cache"]
        assert main(argv) == 0
        path = out / "live" / "trust.json"
        row = json.loads(path.read_text())
        unreadable = {**row, "score": None, "reason": "per-field-certainty: unreadable: the reply is not JSON"}
        path.write_text(json.dumps(unreadable))
        made = len(server.requests)
        assert main(argv) == 0
        assert len(server.requests) == made  # TLM's own answer, kept
        path.write_text(json.dumps({**row, "score": None, "reason": "argument: request_failed: timeout: read"}))
        assert main(argv) == 0
        assert len(server.requests) == made + 5  # no answer: CONSTRUCT's 5 calls made again
    assert json.loads(path.read_text())["score"] == row["score"]


def test_quick_report_only_rewrites_the_report_without_a_model(tmp_path):
    out = tmp_path / "demo"
    with ScriptedServer(live_handler) as server:
        assert main(["--out", str(out), "--base-url", server.base_url, "--model", "scripted", "--n", "2"]) == 0
    first = (out / "report.md").read_text()
    (out / "report.md").unlink()
    assert main(["--out", str(out), "--report-only"]) == 0  # no server is running now
    assert (out / "report.md").read_text() == first
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path / "empty"), "--report-only"])


def test_full_demo_writes_report_with_every_stage(tmp_path):
    out = tmp_path / "demo"
    with ScriptedServer(generator_or_judge) as server:
        argv = ["--full", "--out", str(out), "--base-url", server.base_url, "--model", "scripted", "--n", "6"]
        assert main([*argv, "--controlled", "20"]) == 0
        other = {"id": "synthetic-invoice-00000", "scorer": "other", "field": "__doc__", "score": 0.5}
        with (out / "generated" / "scores.jsonl").open("a") as fh:
            fh.write(json.dumps(other) + "\n")
        assert main([*argv, "--controlled", "20"]) == 0  # a rerun resumes: nothing is judged twice
        # the demo writes its scores through the run store: another scorer's rows survive a rerun
        assert '"scorer":"other"' in (out / "generated" / "scores.jsonl").read_text().replace(" ", "")
    report = (out / "report.md").read_text()
    for heading in (
        "The model's own extractions: finding the wrong items",
        "Planted errors: finding the wrong items",
        "Does the order of the fields sway the judge?",
    ):
        assert heading in report
    for internal in ("nan", "auroc_low", "variant_b", "sec:r-s-o", "ece_mass", "judge-doc"):
        assert internal not in report, internal  # a reader's words, not the tables' column names
    record = json.loads((out / "demo.json").read_text())
    assert (record["n_docs"], record["n_controlled"]) == (6, 20)
    judgments = [json.loads(line) for line in (out / "controlled" / "judgments.jsonl").read_text().splitlines()]
    keys = [j["key"] for j in judgments]
    assert len(keys) == len(set(keys))
    assert {j["mode"] for j in judgments} == {"doc", "field"}
    assert {j["constrained"] for j in judgments} == {"none"}  # a generic backend takes no grammar
    assert len({j["variant"] for j in judgments if j["mode"] == "doc"}) == 2
    labels = [json.loads(line) for line in (out / "controlled" / "labels.jsonl").read_text().splitlines()]
    assert sum(r["wrong"] for r in labels) == 5  # 25% of 20
    assert (
        out / "controlled" / "figures" / "roc_document.png"
    ).exists() and "(controlled/figures/roc_document.png)" in report
    assert (out / "generated" / "scores.jsonl").read_text().count("token_logprob") >= 6


def _report_without_times(path) -> str:
    """The report's tables and counts: lines that state times, loads or the command are left out
    (the full demo's two opening lines; the default demo's opening line and its stage table)."""
    keep = []
    for line in path.read_text().splitlines():
        if line.startswith(("Made by", "as generator and judge")):
            continue
        cells = line.strip("| ").split(" | ")
        if line.startswith("| ") and len(cells) == 6 and cells[1] in ("model", "live", "no model"):
            continue  # the default demo's stage table: times, calls made and loads
        keep.append(line)
    return "\n".join(keep)


def _judge_requests(server) -> int:
    return sum(not r.body["messages"][0]["content"].startswith("You extract structured data") for r in server.requests)


@pytest.mark.slow
def test_killed_demo_resumes_with_only_the_missing_calls_and_the_same_report(tmp_path):
    """SIGKILL mid-judging, rerun: calls on resume = judgments missing at the kill; same report."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from construct_eval.llm.client import EMBEDDED_PREFIX
    from tests.conftest import env_without_proxy

    common = ["--full", "--model", "scripted", "--n", "6", "--controlled", "20", "--no-cache"]
    # each server stands in for the embedded one, restarted on a new port: same identity, one slot
    info = {"identity": EMBEDDED_PREFIX + "scripted:sha256=0:n_ctx=4096", "slots": 1}
    with ScriptedServer(generator_or_judge, latency_s=0.01, info=info) as server:
        whole = tmp_path / "whole"
        assert main(["--out", str(whole), "--base-url", server.base_url, *common]) == 0
        total_calls = _judge_requests(server)

    killed = tmp_path / "killed"
    judgments = killed / "controlled" / "judgments.jsonl"
    with ScriptedServer(generator_or_judge, latency_s=0.01, info=info) as server:
        argv = [sys.executable, "-m", "construct_eval.demo", "--out", str(killed), "--base-url", server.base_url]
        proc = subprocess.Popen([*argv, *common], env=env_without_proxy(), stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if judgments.exists() and judgments.read_text().count("\n") >= 40:
                break
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = _judge_requests(server)
    assert 0 < before < total_calls, "the kill must land while judging"

    def written() -> int:
        return sum(
            (killed / part / "judgments.jsonl").read_text().count("\n")
            for part in ("generated", "controlled")
            if (killed / part / "judgments.jsonl").exists()
        )

    at_kill = written()
    with ScriptedServer(generator_or_judge, info=info) as server:
        assert main(["--out", str(killed), "--base-url", server.base_url, *common]) == 0
        on_resume = _judge_requests(server)
    assert on_resume == total_calls - at_kill  # only what was missing; no cache to hide a call
    assert written() == total_calls
    assert _report_without_times(killed / "report.md") == _report_without_times(whole / "report.md").replace(
        str(whole), str(killed)
    )


def test_comparison_with_the_recorded_demo_matches_scorers_by_identity(tmp_path):
    """A recorded demo named its judge ``judge-doc``; a newer one, beside a variant, names the same
    prompt ``judge-doc[sec:r-s-o|fields:original]``: one row, in a reader's words, with a difference."""
    from construct_eval.demo import compare_with_recorded

    def detection(folder, rows):
        (folder / "controlled" / "metrics").mkdir(parents=True)
        lines = ["level,scorer,n,auroc"] + [",".join(r) for r in rows]
        (folder / "controlled" / "metrics" / "detection.csv").write_text("\n".join(lines) + "\n")

    detection(tmp_path / "old", [("document", "judge-doc", "24", "0.700")])
    detection(
        tmp_path / "new",
        [
            ("document", "judge-doc[sec:r-s-o|fields:original]", "24", "0.750"),
            ("field", "token_logprob@leaf", "80", ""),
        ],
    )
    lines = compare_with_recorded(tmp_path / "new", tmp_path / "old")
    assert "| document | judge rating | 24 | 24 | 0.750 | 0.700 | +0.050 |" in lines
    assert "| field | token log-probs, leaf fields | 80 | - | - | - |  |" in lines
    assert not any("judge-doc" in line for line in lines)


def test_terminated_demo_stops_while_a_call_is_in_flight(tmp_path):
    """SIGTERM (as job control and `timeout` send it) while the demo waits on a slow reply: the demo
    stops within seconds with exit 143 instead of going on (SystemExit from the handler used to be
    lost when the signal landed in a weakref callback)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import env_without_proxy

    def slow(req):
        reply = generator_or_judge(req)
        return Reply(reply.text, logprobs=reply.logprobs, delay_s=60.0)

    with ScriptedServer(slow) as server:
        argv = [sys.executable, "-m", "construct_eval.demo", "--out", str(tmp_path / "demo"), "--base-url"]
        proc = subprocess.Popen([*argv, server.base_url, "--model", "scripted", "--n", "2", "--no-cache"],
                                env=env_without_proxy(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.requests, "the demo never called the server"
        os.kill(proc.pid, signal.SIGTERM)
        # under a full suite's load a long C-level step (an import) can delay the handler: 45 s is
        # still well under the 60 s reply the demo would otherwise wait for, and the rest of it
        try:
            rc = proc.wait(timeout=45)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("the demo went on after SIGTERM")
    assert rc == 143, proc.stderr.read().decode()[-2000:]


def test_a_terminated_demo_whose_interrupt_is_lost_still_stops_and_cleans_up(tmp_path):
    """An interrupt dropped where Python cannot raise it (here: SIGINT ignored) must not leave a
    terminated demo running: the watchdog runs the demo's cleanups and exits with 143."""
    import signal
    import subprocess
    import sys

    marker = tmp_path / "server-stopped"
    script = (
        "import pathlib, signal, sys, time\n"
        "from construct_eval.demo import pipeline as demo\n"
        "demo.TERMINATE_GRACE_S = 1.0\n"
        "demo._ON_TERMINATE.append(lambda: pathlib.Path(sys.argv[1]).write_text('stopped'))\n"
        "demo._exit_on_sigterm()\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)  # the interrupt is lost\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(marker)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 143
    assert marker.read_text() == "stopped"


def test_report_only_rewrites_the_full_report_from_the_run_folders_without_a_model(tmp_path):
    """``--full --report-only`` needs no server: the same tables from the folders and demo.json alone;
    a folder with no demo record is refused with a message naming the file."""
    out = tmp_path / "demo"
    with ScriptedServer(generator_or_judge) as server:
        argv = ["--full", "--out", str(out), "--base-url", server.base_url, "--model", "scripted", "--n", "6"]
        assert main([*argv, "--controlled", "20"]) == 0
    first = (out / "report.md").read_text()
    (out / "report.md").unlink()
    assert main(["--full", "--out", str(out), "--report-only"]) == 0  # no server is running now
    assert (out / "report.md").read_text() == first
    with pytest.raises(SystemExit):
        main(["--full", "--out", str(tmp_path / "empty"), "--report-only"])


def _detection_row(level, scorer, n, share, auroc, **extra):
    row = {"level": level, "scorer": scorer, "n": n, "prevalence": share, "auroc": auroc, "auprc": 0.5}
    return {"auroc_low": "", "auroc_high": "", "unscored": 0, "distinct_scores": 5, "underpowered": "", **row, **extra}


def test_detection_lines_say_why_a_level_or_a_score_cannot_be_read():
    """A level with one class is a sentence, not rows of nan; a constant score says it orders nothing;
    an underpowered row is marked and the marking explained."""
    from construct_eval.demo.report import detection_lines

    rows = [
        _detection_row("document", "judge-doc", 7, 1.0, float("nan")),
        _detection_row("document", "token_logprob", 7, 1.0, float("nan")),
        _detection_row("field", "judge-field", 63, 57 / 63, 0.5, auroc_low=0.5, auroc_high=0.5, distinct_scores=1),
        _detection_row("field", "token_logprob@top", 63, 57 / 63, 0.789, auroc_low=0.664, auroc_high=0.926,
                       underpowered="57 wrong / 6 right (< 10 of a class)"),
    ]  # fmt: skip
    rows.append(_detection_row("field", "plausibility@leaf", 114, 91 / 114, 0.849, auroc_low=0.796, auroc_high=0.902,
                               documents=7))  # fmt: skip
    text = "\n".join(detection_lines(rows, "generated"))
    assert "| 114 (91) | 0.849 | 0.500 | 0 | no interval: 7 documents |" in text  # 7 documents: too few to resample
    assert "`generated/metrics/detection.md` says which" in text
    assert "Per document, all 7 scored documents are wrong" in text
    assert "nan" not in text and text.count("| document |") == 0
    assert "| field | judge rating, per field | 63 (57) | 0.500 | 0.500 | 0 | one value for every item" in text
    assert "| 63 (57) | 0.789 [0.664, 0.926] | 0.500 | 0 | underpowered |" in text
    assert "_Underpowered_" in text


def test_calibration_lines_keep_each_scores_lowest_brier_map_and_name_the_constant_ones():
    from construct_eval.demo.report import calibration_lines

    rows = [
        {"level": "field", "scorer": "judge-field:expected", "method": "isotonic", "n": 63, "brier": 0.096, "ece_mass": 0.1,
         "prevalence": 57 / 63},
        {"level": "field", "scorer": "judge-field:expected", "method": "platt", "n": 63, "brier": 0.087, "ece_mass": 0.107,
         "prevalence": 57 / 63},
        {"level": "field", "scorer": "judge-field", "method": "undefined: constant score", "n": 63, "brier": ""},
        {"level": "document", "scorer": "plausibility", "method": "not fitted: 3 distinct scores", "n": 20, "brier": ""},
    ]  # fmt: skip
    text = "\n".join(calibration_lines(rows))
    assert "| field | expected rating, per field | 63 | Platt | 0.087 | 0.086 | 0.107 |" in text  # beside the base rate
    assert "isotonic" not in text and "nan" not in text
    assert "Not calibrated (3 distinct scores): plausibility checks (built for the planted kinds) (document)." in text
    assert "Not calibrated (one value for every item): judge rating, per field (field)." in text


def test_the_order_check_says_when_a_constant_judge_makes_agreement_meaningless():
    from construct_eval.demo.report import bias_lines

    pair = {"variant_b": "sec:r-s-o|fields:reversed", "n": 24, "mean_shift": 0.0, "shift_low": 0.0,
            "shift_high": 0.0, "wilcoxon_p": 1.0, "exact_agreement": 1.0}  # fmt: skip
    varied = "\n".join(bias_lines([pair], constant=["expected rating"]))
    assert "| fields reversed | 24 | +0.00 [+0.00, +0.00] | 1.000 | 100% |" in varied
    assert "say nothing" not in varied
    assert "say nothing" in "\n".join(bias_lines([pair], constant=["judge rating"]))
