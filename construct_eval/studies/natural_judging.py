"""How far the natural-error study's judging has come, and what it costs a document.

    .venv/bin/python -m construct_eval.studies.natural_judging [RUNS_FOLDER] > natural_judging.md

For each ``natural-*`` study run with model calls beyond generation, a row per method of
``natural_study.sh`` (parts B1-B6 and C): the documents it has reached, split into wrong and right
by the run's labels, its calls, and the model's seconds per document (the sum of the latencies
of a document's calls: mean and median over the documents). A last row counts the documents every
method has reached, the set on which the paper's four methods can be compared. Everything is read
from the run's audit files (``judgments``, ``verdicts``, ``reflections``, ``construct``, ``samples``) and
``labels.jsonl``; nothing is computed that the package does not record.

A document's first call on a method pays for its prompt (about 25 s on 2 cores) unless the call
before it on the one-slot server shared that prompt's opening; with ``BY_DOC=1`` the forced
rating, the verdicts and the free recipe share it, so their seconds depend on the order in which
they were run (the notes of the run say which). Calls made while another job shared the cores
take several times as long, so the median is the steadier figure.
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.reports.tables import markdown_table
from construct_eval.studies import ROOT, RUNS

FORCED = "grammar:rating-only"

# (method, the audit file, which of its rows belong to it, the row's document id key)
METHODS: tuple[tuple[str, str, Callable[[Mapping[str, Any]], bool], str], ...] = (
    ("B1 forced rating, document and fields", "judgments", lambda r: r.get("constrained") == FORCED, "doc_id"),
    ("B2 P(correct) verdicts, document and fields", "verdicts", lambda r: True, "id"),
    ("B3 free recipe, document", "judgments", lambda r: r.get("constrained") == "none", "doc_id"),
    ("B4 reflection ensemble", "reflections", lambda r: True, "id"),
    ("B5 CONSTRUCT (the authors' TLM 0.0.3, medium preset)", "construct", lambda r: True, "id"),
    (
        "B6 per-field judge, explanation then rating (one call)",
        "judgments",
        lambda r: r.get("mode") == "fields-joint",
        "doc_id",
    ),
    ("C generator samples (temperature 1)", "samples", lambda r: True, "id"),
)
ONE_CALL_MANY_ROWS = {"B6"}
"""Methods whose one call is written as a row per field, each with the call's latency: counted once."""


def _seconds(values: Iterable[float]) -> tuple[str, str]:
    vals = list(values)
    if not vals:
        return "-", "-"
    return f"{sum(vals) / len(vals):.1f}", f"{statistics.median(vals):.1f}"


def judging_rows(path: Path) -> list[dict[str, object]]:
    """The run's rows: one per method with any call, then the documents every method reached."""
    run = RunDir(path, create=False)
    wrong = {r["id"]: bool(r["wrong"]) for r in run.iter_rows("labels") if not r.get("parse_failed")}
    rows: list[dict[str, object]] = []
    reached: list[set[str]] = []
    for method, file, mine, id_key in METHODS:
        seconds: dict[str, float] = defaultdict(float)
        per_doc: Counter[str] = Counter()
        calls = 0
        once = method.split(" ", 1)[0] in ONE_CALL_MANY_ROWS
        seen: set[tuple[str, object]] = set()
        for r in run.iter_rows(file):
            if mine(r):
                if once:  # one call: its document and latency, however many field rows carry them
                    call = (str(r[id_key]), r.get("latency_s"))
                    if call in seen:
                        continue
                    seen.add(call)
                calls += 1
                per_doc[str(r[id_key])] += 1
                seconds[str(r[id_key])] += float(r.get("latency_s") or 0.0)
        if not calls:
            continue
        docs = set(seconds)
        reached.append(docs)
        mean, median = _seconds(seconds.values())
        rows.append({**_row(path, method, docs, wrong, calls, mean, median), "partial documents": partial(per_doc)})
    if len(reached) > 1:
        every = set.intersection(*reached)
        rows.append(_row(path, "every method above", every, wrong, None, "-", "-"))
    return rows


def partial(calls_per_doc: Counter[str]) -> int:
    """The documents a method reached with fewer calls than most documents got (a run stopped in the
    middle of a document's calls): counted so a table of notices reached and one of notices scored agree."""
    if not calls_per_doc:
        return 0
    usual = Counter(calls_per_doc.values()).most_common(1)[0][0]
    return sum(k < usual for k in calls_per_doc.values())


def _row(
    path: Path, method: str, docs: set[str], wrong: Mapping[str, bool], calls: int | None, mean: str, median: str
) -> dict[str, object]:
    n_wrong = sum(wrong.get(d, False) for d in docs)
    return {
        "run": f"`{path.name}`",
        "method": method,
        "documents": len(docs),
        "wrong": n_wrong,
        "right": len(docs) - n_wrong,
        "calls": "-" if calls is None else calls,
        "model s/doc (mean)": mean,
        "model s/doc (median)": median,
    }


def main(argv: list[str]) -> int:
    runs = Path(argv[0]) if argv else RUNS
    studied = sorted(
        p
        for p in runs.glob("natural-*")
        if not p.name.startswith("natural-pilot-")
        and any((p / f"{f}.jsonl").is_file() for f in ("verdicts", "reflections"))
    )
    if not studied:
        print(f"no natural-* study run with verdicts or reflections under {runs}", file=sys.stderr)
        return 1
    print("# The natural-error study's judging, method by method\n")
    shown = runs.resolve().relative_to(ROOT) if runs.resolve().is_relative_to(ROOT) else runs
    print(f"From the run folders under `{shown}` (`construct_eval/studies/natural_judging.py`).\n")
    print(markdown_table([row for p in studied for row in judging_rows(p)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
