"""The demo's ``report.md``, from its run folders and its own record, never a model.

Two demos write a report here:

- ``make demo`` (:func:`write_quick_report`): the live part (a few documents generated, judged and
  scored by CONSTRUCT now; :mod:`construct_eval.demo.live`), each stage's time and the machine's
  load (:class:`QuickRecord`), then the recorded study's answers read from the stored tables
  (:mod:`construct_eval.demo.recorded`).
- ``make demo-full`` (:func:`write_report`): the whole pipeline on the embedded model's own runs
  (generated and planted-error outputs), evaluated, calibrated and checked for order bias here;
  its record is :class:`DemoRecord`.

Both are saved as ``demo.json`` beside the run folders, so ``python -m construct_eval.demo
--report-only`` (with ``--full`` for the full demo) rewrites a recorded demo's report after this
module changes, without recording the demo again.

The full demo's report says in words what its tables cannot: how many outputs did not parse (the
judge never saw them), a level where every item is wrong (no score can be assessed there), a score
with one value for every item (it orders nothing and is not calibrated), and a row too small to
read (``underpowered``, with the table that says why).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from construct_eval.csv_tables import read_rows
from construct_eval.data.runs import RunDir
from construct_eval.demo.live import LIVE, Stage, compare_live, live_lines, load_average
from construct_eval.demo.recorded import recorded_sections
from construct_eval.numbers import interval
from construct_eval.reports.tables import markdown_table
from construct_eval.scorer_labels import display_name, short_order
from construct_eval.stats.calibrators import calibrator_words

RECORDED = Path("results/demo")
"""The recorded demo ``make demo`` is compared with (``make demo-record`` replaces it)."""
RECORDED_FULL = Path("results/demo-full")
"""The recorded full demo ``make demo-full`` is compared with (``make demo-full-record`` replaces it)."""

PARTS = {
    "generated": "The model's own extractions",
    "controlled": "Planted errors",
}
"""The demo's two run folders and the headings the report gives them."""


@dataclass(frozen=True)
class DemoRecord:
    """What made a demo, for its report's first lines: saved beside the run folders. ``minutes``
    is the wall time of the model stages (generation to the last judgment), the report's own
    tables and figures not counted."""

    command: str
    model: str
    model_text: str
    minutes: float
    generate_s: float
    judge_s: float
    n_docs: int
    n_controlled: int

    FILE = "demo.json"

    def save(self, out: Path) -> None:
        (out / self.FILE).write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, out: Path) -> DemoRecord:
        path = out / cls.FILE
        if not path.exists():
            raise FileNotFoundError(f"{path}: no demo record; run the demo (make demo) before --report-only")
        return cls(**json.loads(path.read_text()))


def label_counts(run: RunDir) -> dict[str, int]:
    """Documents, wrong documents and outputs that did not parse, from the run's labels."""
    rows = run.read("labels")
    return {
        "documents": len(rows),
        "wrong": sum(bool(r.get("wrong")) for r in rows),
        "unparsed": sum(bool(r.get("parse_failed")) for r in rows),
    }


def _float(value: Any) -> float:
    try:
        return float(value) if value not in (None, "") else math.nan
    except (TypeError, ValueError):
        return math.nan


MIN_DOCUMENTS_FOR_INTERVAL = 10
"""Fewer documents than this to resample, and the report shows no interval: a document bootstrap
over 7 documents draws from a handful of distinct resamples and can look far too narrow."""


def _interval(row: Mapping[str, Any], key: str) -> str:
    """``0.722 [0.481, 0.912]``; the estimate alone where the bootstrap gave no interval or had
    fewer than :data:`MIN_DOCUMENTS_FOR_INTERVAL` documents to resample."""
    x, lo, hi = (_float(row.get(k)) for k in (key, f"{key}_low", f"{key}_high"))
    documents = _float(row.get("documents"))
    if math.isnan(lo) or math.isnan(hi) or documents < MIN_DOCUMENTS_FOR_INTERVAL:
        return f"{x:.3f}"
    return interval(x, lo, hi)


def _constant(row: Mapping[str, Any]) -> bool:
    return _float(row.get("distinct_scores")) == 1


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """The package's Markdown table (:func:`markdown_table`: one line a row, pipes escaped) as lines."""
    return markdown_table([dict(zip(header, cells, strict=True)) for cells in rows], header).rstrip("\n").split("\n")


def detection_lines(rows: Sequence[Mapping[str, Any]], folder: str = "<run>") -> list[str]:
    """The detection table in words, with a sentence for each level where no score can be
    assessed (one class only) instead of rows of ``nan``."""
    shown, one_class = [], {}
    for row in sorted(rows, key=lambda r: r["level"] != "document"):  # documents first, then fields
        if math.isnan(_float(row.get("auroc"))):
            one_class.setdefault(row["level"], (int(row["n"]), _float(row.get("prevalence"))))
            continue
        n, share = int(row["n"]), _float(row.get("prevalence"))
        notes = ["one value for every item: orders nothing"] if _constant(row) else []
        if _float(row.get("documents")) < MIN_DOCUMENTS_FOR_INTERVAL:
            notes.append(f"no interval: {int(_float(row['documents']))} documents")
        if row.get("underpowered"):
            notes.append("underpowered")
        unscored = _float(row.get("unscored"))
        unscored = 0 if math.isnan(unscored) else int(unscored)
        shown.append(
            (
                row["level"],
                display_name(row["scorer"]),
                f"{n} ({round(n * share)})",
                f"{_float(row.get('auroc')):.3f}" if _constant(row) else _interval(row, "auroc"),
                f"{_float(row.get('auprc')):.3f}",
                str(unscored),
                "; ".join(notes),
            )
        )
    lines: list[str] = []
    for level, (n, share) in one_class.items():
        side = "wrong" if share >= 0.5 else "right"
        lines += [
            f"Per {level}, all {n} scored {level}s are {side}: AUROC needs both right and wrong items,"
            f" so no score can be assessed at this level.",
            "",
        ]
    if shown:
        lines += _table(
            ["level", "score", "items (wrong)", "AUROC [95% CI]", "AUPRC", "replies unscored", "note"], shown
        )
        if any(r[-1].endswith("underpowered") for r in shown):
            lines += [
                "",
                "_Underpowered_: fewer than 10 items of a class, fewer than 10 documents to resample, or an"
                f" interval wider than 0.3; `{folder}/metrics/detection.md` says which.",
            ]
    return lines


def calibration_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each score's out-of-fold map with the lowest Brier score (a point estimate among a few
    maps), and a sentence for the scores no map was fitted to, with the table's reason (one value
    for every item; too few distinct values)."""
    best: dict[tuple[str, str], Mapping[str, Any]] = {}
    unfitted: dict[str, list[str]] = {}  # why no map was fitted -> the scores
    for row in rows:
        key = (row["level"], display_name(row["scorer"]))
        if math.isnan(_float(row.get("brier"))):
            method = str(row.get("method", ""))
            why = "one value for every item" if method.startswith("undefined") else method.removeprefix("not fitted: ")
            unfitted.setdefault(why, []).append(f"{key[1]} ({key[0]})")
            continue
        if key not in best or _float(row.get("brier")) < _float(best[key].get("brier")):
            best[key] = row
    table = []
    for (level, score), row in best.items():
        share = _float(row.get("prevalence"))
        table.append(
            (
                level,
                score,
                str(row["n"]),
                calibrator_words(str(row["method"])),
                f"{_float(row.get('brier')):.3f}",
                f"{share * (1 - share):.3f}",
                f"{_float(row.get('ece_mass')):.3f}",
            )
        )
    header = ["level", "score", "items", "map (lowest Brier)", "Brier", "Brier, base rate", "ECE (equal-mass bins)"]
    lines = _table(header, table)
    if table:
        lines += [
            "",
            "_Brier, base rate_: always predicting the items' share wrong (in sample, so a little"
            " flattering); a map that does not beat it has learnt the error rate, not the score.",
        ]
    for why, scores in unfitted.items():
        lines += ["", f"Not calibrated ({why}): {'; '.join(scores)}."]
    return lines


def bias_lines(pairs: Sequence[Mapping[str, Any]], constant: Iterable[str] = ()) -> list[str]:
    """The order check: each other order's rating shift from the default order, in words.
    ``constant``: the document scores that gave every document one value; where the judge's rating
    is one of them, a sentence says the agreement shows nothing."""
    rows = []
    for row in pairs:
        order, _ = short_order(row["variant_b"])
        lo, hi = _float(row.get("shift_low")), _float(row.get("shift_high"))
        rows.append(
            (
                order or str(row["variant_b"]),
                str(row["n"]),
                interval(_float(row.get("mean_shift")), lo, hi, spec="+.2f", bounds="+.2f"),
                f"{_float(row.get('wilcoxon_p')):.3f}",
                f"{_float(row.get('exact_agreement')):.0%}",
            )
        )
    lines = _table(
        ["order of the output's fields", "documents", "mean rating shift [95% CI]", "Wilcoxon p", "same rating"],
        rows,
    )
    if "judge rating" in set(constant):
        lines += [
            "",
            "The judge gave every document the same rating in the default order, so ratings that agree"
            " across orders say nothing here about whether the order sways it.",
        ]
    return lines


FIGURE_WORDS = {
    "roc_document": "ROC curves: finding the wrong documents",
    "roc_field": "ROC curves: finding the wrong fields",
}
"""Alternative text for the figures the report shows, by file name (a rating histogram otherwise)."""


def figure_links(paths: Sequence[Path], out: Path, prefix: str, part: str = "") -> list[str]:
    """Markdown images for the figures whose file name starts with ``prefix``, each with words
    for a reader who cannot see it."""
    links = []
    for p in paths:
        if p.name.startswith(prefix):
            words = FIGURE_WORDS.get(p.stem, "how the judge used the 1-10 scale, wrong and right items apart")
            alt = f"{words} ({part.lower()})" if part else words
            links.append(f"![{alt}]({p.relative_to(out).as_posix()})")
    return links


def head_lines(record: DemoRecord, counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The report's opening: what made it, and what the two sets of outputs are."""
    gen, con = counts["generated"], counts["controlled"]
    judged = gen["documents"] - gen["unparsed"]
    unparsed = f"; {gen['unparsed']} did not parse as JSON, so the judge saw {judged}" if gen["unparsed"] else ""
    return [
        "# construct-eval demo",
        "",
        f"Made by `{record.command}` with `{record.model}` ({record.model_text})",
        f"as generator and judge, in {record.minutes:.1f} min (generation {record.generate_s:.0f} s,"
        f" judging {record.judge_s:.0f} s) on this machine.",
        "",
        "Two sets of outputs, both extractions from synthetic business documents:",
        "",
        f"- **{PARTS['generated']}** (`generated/`): {gen['documents']} documents, {gen['wrong']} of them"
        f" wrong{unparsed}.",
        f"- **{PARTS['controlled']}** (`controlled/`): {con['documents']} documents whose outputs are the"
        f" ground truth, with errors planted in {con['wrong']} of them.",
        "",
        "Scores: the judge's 1-10 rating per document and per field (the rating alone, forced), the",
        "expected rating its log-probs give, the least trusted field as a document score (least over",
        "fields), the generator's token log-probs, and two baselines: plausibility checks (built for the planted kinds)",
        "and the field prior (each field's error rate elsewhere; it uses labels). AUROC is for finding",
        "wrong items; 0.5 is chance. A model this small is a weak judge: the demo shows the pipeline at",
        "work, not a judge worth trusting.",
        "",
    ]


def write_report(out: Path, record: DemoRecord, *, recorded: Path = RECORDED_FULL) -> Path:
    """The full demo's report: evaluate, calibrate and check order bias on its run folders; write ``report.md``."""
    from construct_eval.reports.run_analyses import bias_run, calibrate_run, evaluate_run

    runs = {name: RunDir(out / name) for name in PARTS}
    counts = {name: label_counts(run) for name, run in runs.items()}
    sections: list[str] = []
    constant: dict[str, set[str]] = {}
    for name, run in runs.items():
        ev = evaluate_run(run, None, n_boot=1000)
        constant[name] = {display_name(r["scorer"]) for r in ev["rows"] if r["level"] == "document" and _constant(r)}
        sections += [f"## {PARTS[name]}: finding the wrong items", "", *detection_lines(ev["rows"], name), ""]
        sections += figure_links(ev["figures"], out, "roc_", PARTS[name])
        sections += figure_links(ev["figures"], out, "ratings_", PARTS[name])
        cal = calibrate_run(run, None, methods=("isotonic", "platt"))
        sections += ["", f"### {PARTS[name]}: each score as an error rate (out of fold)", ""]
        if cal["rows"]:
            sections += [
                "The map with the lowest Brier score for each score; every map, and the other"
                f" ECE variants, are in `{name}/metrics/calibration.md`.",
                "",
                *calibration_lines(cal["rows"]),
            ]
        else:
            sections.append("_Too few labelled items of both classes to calibrate out of fold._")
        sections.append("")
    br = bias_run(runs["controlled"], mode="doc", variants=["default", "reversed"])
    sections += [
        "## Does the order of the fields sway the judge?",
        "",
        "The planted-error documents judged again with the output's fields in reverse order. A judge"
        " that reads the content gives each document the same rating either way.",
        "",
        *bias_lines(br["pairs"], constant["controlled"]),
    ]
    comparison = compare_with_recorded(out, recorded)
    report = out / "report.md"
    report.write_text("\n".join(head_lines(record, counts) + sections + comparison) + "\n")
    return report


def _detection(folder: Path) -> dict[tuple[str, str], dict[str, str]]:
    """A demo part's detection rows keyed by (level, the scorer's display name).

    The display name is the scorer's identity as a reader meets it: a recorded demo that wrote
    ``judge-doc`` and one that writes ``judge-doc[sec:r-s-o|fields:original]`` (the same prompt,
    named by a newer grammar) meet on one row, ``judge rating``.
    """
    path = folder / "metrics" / "detection.csv"
    if not path.exists():
        return {}
    return {(r["level"], display_name(r["scorer"])): r for r in read_rows(path)}


def compare_with_recorded(out: Path, recorded: Path) -> list[str]:
    """Lines for the report: this demo beside the recorded one.

    ``make demo`` (a ``live/`` folder): each live label, rating and trust score, and each quoted
    cell of the recorded part, against the recorded demo's (:func:`compare_quick`). ``make
    demo-full``: each scorer's AUROC and n beside the recorded full demo's. The same model and
    seed give the same outputs, so the numbers should agree; a different model, a changed prompt
    or another llama.cpp build shows up here first.
    """
    if out.resolve() == recorded.resolve():
        target = "demo-record" if (out / LIVE).exists() else "demo-full-record"
        return ["", f"_This is the recorded demo (`make {target}`)._"]
    if (out / LIVE).exists():
        return compare_quick(out, recorded)
    lines = ["", f"## Compared with the recorded demo (`{recorded}`)", ""]
    found = False
    for part in PARTS:
        now, then = _detection(out / part), _detection(recorded / part)
        if not then:
            continue
        found = True
        lines += [
            f"**{PARTS[part]}**", "",
            "| level | score | n now | n recorded | AUROC now | AUROC recorded | difference |",
            "|---|---|---|---|---|---|---|",
        ]  # fmt: skip
        for key in sorted(set(now) | set(then)):
            a, b = now.get(key, {}), then.get(key, {})
            x, y = _float(a.get("auroc")), _float(b.get("auroc"))
            diff = "" if math.isnan(x) or math.isnan(y) else f"{x - y:+.3f}"
            shown = ["-" if math.isnan(v) else f"{v:.3f}" for v in (x, y)]
            lines.append(
                f"| {key[0]} | {key[1]} | {a.get('n', '-')} | {b.get('n', '-')} | {shown[0]} | {shown[1]} | {diff} |"
            )
        lines.append("")
    if not found:
        lines.append(f"_No recorded demo at `{recorded}` to compare with._")
    return lines


# --------------------------------------------------------------------------- make demo's report

CELLS = "cells.csv"
"""Every cell of a stored table the recorded part of ``make demo``'s report quotes (the ledger)."""


@dataclass
class QuickRecord:
    """What made a ``make demo`` report: the command, the model, the documents, each stage's time
    and load, the total wall time (the server's start to the report written) and the machine's
    load averages (1, 5 and 15 minutes) when it started and ended. Saved as ``demo.json``."""

    command: str
    model: str
    model_text: str
    n_docs: int
    stages: list[Stage]
    total_s: float = 0.0
    load_start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_end: tuple[float, float, float] = (0.0, 0.0, 0.0)
    cores: int = 0

    FILE = "demo.json"

    def save(self, out: Path) -> None:
        (out / self.FILE).write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, out: Path) -> QuickRecord:
        path = out / cls.FILE
        if not path.exists():
            raise FileNotFoundError(f"{path}: no demo record; run the demo (make demo) before --report-only")
        d = json.loads(path.read_text())
        d["stages"] = [Stage(**s) for s in d["stages"]]
        d["load_start"], d["load_end"] = tuple(d["load_start"]), tuple(d["load_end"])
        return cls(**d)


def _load(triple: Sequence[float]) -> str:
    return " / ".join(f"{x:.2f}" for x in triple)


def stage_lines(record: QuickRecord) -> list[str]:
    """The stages as a table: what each did, live or recorded, its seconds, calls and load."""
    rows = []
    for s in record.stages:
        per = f"{s.seconds / s.calls:.1f}" if s.calls else "-"
        rows.append((s.name, "live" if s.live else "no model", f"{s.seconds:.1f}", str(s.calls), per, f"{s.load:.2f}"))
    header = ["stage", "model", "seconds", "calls", "seconds a call", "load (1 min) at its end"]
    return markdown_table([dict(zip(header, r, strict=True)) for r in rows], header).rstrip("\n").split("\n")


def quick_head_lines(record: QuickRecord) -> list[str]:
    cores = f"{record.cores} cores" if record.cores else "this machine"
    return [
        "# construct-eval demo",
        "",
        f"Made by `{record.command}` with `{record.model}` ({record.model_text}) as generator and judge,"
        f" in **{record.total_s / 60:.1f} min** of wall time on {cores} (load average over 1 / 5 / 15"
        f" minutes: {_load(record.load_start)} at the start, {_load(record.load_end)} at the end; a load"
        " above the number of cores means other work shared them).",
        "",
        "**What is live and what is recorded.** The first part is live: the embedded model extracts",
        "JSON from a few synthetic documents, the outputs are labelled, the model judges them per",
        "document and per field, and CONSTRUCT scores one output, all now, on this machine. The",
        "sections marked _(recorded)_ make no model call: they read the tables the recorded 1.5B",
        "judge study stored under `results/runs/`, and every number in them is formatted by code",
        f"from a named cell of those tables (listed in `{CELLS}` beside this report).",
        "",
        "Each stage's wall time, as the demo printed it while it ran:",
        "",
        *stage_lines(record),
        "",
    ]


def write_quick_report(out: Path, record: QuickRecord, *, recorded: Path = RECORDED, root: Path | None = None) -> Path:
    """``make demo``'s report: the live part from ``out/live``, the recorded part from the stored
    tables under ``root``, and the comparison with the recorded demo; writes ``report.md`` and
    the ledger of quoted cells (:data:`CELLS`)."""
    sections, ledger = recorded_sections(root)
    with (out / CELLS).open("w", newline="") as fh:
        writer = csv.DictWriter(fh, ["table", "where", "column", "format", "quoted"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(ledger.rows())
    live = live_lines(out, record.model, record.n_docs)
    comparison = compare_with_recorded(out, recorded)
    report = out / "report.md"
    report.write_text("\n".join(quick_head_lines(record) + live + [""] + sections + comparison) + "\n")
    return report


def compare_quick(out: Path, recorded: Path) -> list[str]:
    """``make demo`` beside its recorded run: the live values, and the recorded part's quoted cells."""
    lines = ["", f"## Compared with the recorded demo (`{recorded}`)", ""]
    if not (recorded / LIVE).exists():
        return [*lines, f"_No recorded demo at `{recorded}` to compare with._"]
    lines += compare_live(out, recorded)
    now, then = _cells(out / CELLS), _cells(recorded / CELLS)
    if then:
        differ = [k for k in sorted(set(now) | set(then)) if now.get(k) != then.get(k)]
        lines += [
            "",
            f"**Recorded part:** {len(then) - len(differ)} of {len(then)} quoted cells as in the recorded report"
            + (": the stored tables changed since it was recorded." if differ else "."),
        ]
        lines += [f"- {k}: {now.get(k, '-')} now, {then.get(k, '-')} recorded" for k in differ[:10]]
    return lines


def _cells(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    return {f"{r['table']} [{r['where']}] {r['column']}": r["quoted"] for r in read_rows(path)}


__all__ = [
    "RECORDED",
    "RECORDED_FULL",
    "DemoRecord",
    "QuickRecord",
    "compare_with_recorded",
    "load_average",
    "write_quick_report",
    "write_report",
]
