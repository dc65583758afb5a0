"""The natural-error pilots' table: each pilot's document error rate, n and seconds per document.

    .venv/bin/python -m construct_eval.studies.natural_pilots_report [RUNS_FOLDER] > natural_pilots.md

Reads every ``natural-*`` run folder: the pilots (``natural-pilot-*``) and the study's own runs
(``natural_study.sh``: its first documents are a pilot of its setting too, and the fourth
dataset's offline rebuild is one), each marked as which. The generator and prompt from run.json, the counts
from the label summary that ``construct-eval label`` writes there, the time from the outputs'
latencies (the generator's time per document, mean and median: calls made while another
job shared the cores take several times as long) and from ``commands.log`` (the generate
commands' wall time, model loading excluded). Nothing is computed here that the package does
not record; the interval is Wilson's 95% score interval for the error rate. A pilot whose rate
lies within the issue's target range (25% to 75% wrong documents) is marked.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

from construct_eval.data.runs import RunDir
from construct_eval.numbers import interval
from construct_eval.provenance import stage_model
from construct_eval.reports.tables import markdown_table
from construct_eval.stats.calibration import wilson
from construct_eval.studies import ROOT, RUNS, is_copy

TARGET = (0.25, 0.75)


def _generate_seconds(path: Path) -> int | None:
    """Wall seconds of the ``generate`` commands in the run's commands.log (None without one)."""
    log = path / "commands.log"
    if not log.is_file():
        return None
    seconds = [int(m.group(1)) for line in log.read_text().splitlines()
               if " generate " in line and (m := re.search(r" : (\d+) s", line))]  # fmt: skip
    return sum(seconds) if seconds else None


def pilot_row(path: Path) -> dict[str, object]:
    run = RunDir(path, create=False)
    meta = run.meta()
    dataset = meta.get("dataset") or {}
    source = dataset.get("source") or {}
    outputs = run.outputs()
    labels = meta.get("labels") or {}
    n, wrong = int(labels.get("documents", 0)), int(labels.get("documents_wrong", 0))
    lo, hi = wilson(wrong, n) if n else (float("nan"), float("nan"))
    latency = [float(r["latency_s"]) for r in outputs if r.get("latency_s") is not None]
    wall = _generate_seconds(path)
    rate = wrong / n if n else float("nan")
    return {
        "run": f"`{path.name}`",
        "kind": "pilot" if path.name.startswith("natural-pilot-") else "study run",
        "dataset": dataset.get("name", "?"),
        "generator": stage_model(meta, "generator") or "?",
        "prompt": source.get("prompt", "package"),
        "n": n,
        "wrong": wrong,
        "document error rate [95% CI]": interval(rate, lo, hi, spec=".0%") if n else "-",
        "in 25-75%": "yes" if n and TARGET[0] <= rate <= TARGET[1] else "no",
        "unparsed": labels.get("unparsed", 0),
        "leaf fields wrong": f"{labels['field_error_rate']:.1%}" if "field_error_rate" in labels else "-",
        "s/doc (generator calls)": f"{sum(latency) / len(latency):.1f}" if latency else "-",
        "median s/doc": f"{statistics.median(latency):.1f}" if latency else "-",  # a shared machine's slow calls aside
        "s/doc (wall)": f"{wall / len(outputs):.1f}" if wall and outputs else "-",
    }


def main(argv: list[str]) -> int:
    runs = Path(argv[0]) if argv else RUNS
    pilots = sorted(
        p
        for p in runs.glob("natural-*")
        if (p / "run.json").is_file() and (p / "outputs.jsonl").is_file() and not is_copy(p)  # a generator's runs
    )
    if not pilots:
        print(f"no natural-* run folders with outputs under {runs}", file=sys.stderr)
        return 1
    rows = [pilot_row(p) for p in pilots]
    print("# Natural-error pilots\n")
    shown = runs.resolve().relative_to(ROOT) if runs.resolve().is_relative_to(ROOT) else runs
    print(f"From the run folders under `{shown}` (`construct_eval/studies/natural_pilots_report.py`).\n")
    print(markdown_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
