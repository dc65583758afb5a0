"""Counts the findings quote that no analysis table holds, computed from the run files.

Written to ``results/FINDINGS.counts.csv`` (:data:`~.facts.COUNTS`) before the findings are
worded, each with what it counts and of how many; the findings quote them from there as cells
like any other: what the plausibility checks' auto-accept threshold lets through on the main run,
and the natural study's two error patterns.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from construct_eval.fields import is_empty
from construct_eval.reports.cells import Cell
from construct_eval.studies import ROOT
from construct_eval.studies.balanced_order import balanced_order
from construct_eval.studies.findings.facts import MAIN, NATURAL, det

COUNT_COLUMNS = ["key", "run", "count", "of", "share", "what"]


def _share(n: int, of: int) -> float:
    return round(n / of, 4) if of else float("nan")


def _row(key: str, run: str, n: int, of: int, what: str) -> dict[str, object]:
    return {"key": key, "run": run, "count": n, "of": of, "share": _share(n, of), "what": what}


def checks_accept(root: Path) -> list[dict[str, object]]:
    """What the plausibility checks' auto-accept threshold lets through on the main run (alpha =
    5%, per field): how many fields, how many of them empty outputs, how many filled ones wrong."""
    from construct_eval import RunDir
    from construct_eval.decide.policy import labelled_items, run_outputs

    cell = Cell(
        f"{MAIN}/decision_thresholds.csv",
        {"level": "field", "scorer": "plausibility@leaf", "alpha": "0.05"},
        "threshold",
    )
    threshold = cell.value(root)
    run = RunDir(root / MAIN.removesuffix("/metrics"), create=False)
    items = labelled_items(run, "plausibility@leaf", "field")
    outputs = run_outputs(run)
    accepted = empty = filled = filled_wrong = 0
    empty_scores = set()
    for doc, field, score, wrong in zip(items.doc_ids, items.fields, items.scores, items.wrong, strict=True):
        if "." in field or "[" in field:
            raise ValueError(f"{MAIN}: {field!r} is not a top-level field; read its value by path")
        left_empty = is_empty((outputs.get(doc) or {}).get(field))
        if left_empty:
            empty_scores.add(float(score))
        if score < threshold:
            continue
        accepted += 1
        empty += left_empty
        filled += not left_empty
        filled_wrong += bool(wrong) and not left_empty
    if len(empty_scores) != 1 or min(empty_scores) < threshold:
        raise ValueError(f"{MAIN}: the checks no longer give every empty output one accepted value ({empty_scores})")
    coverage = cell.with_column("coverage").value(root)
    if abs(accepted / len(items.scores) - coverage) > 5e-4:
        raise ValueError(
            f"{MAIN}: {accepted} of {len(items.scores)} fields at or above {threshold}, not the table's coverage {coverage}"
        )
    name = run.path.name
    return [
        _row("checks accept", name, accepted, len(items.scores),
             f"fields the plausibility checks score at or above their threshold at alpha = 5% ({threshold:g}), of all fields"),
        _row("checks accept: empty outputs", name, empty, accepted,
             "of those, fields the output left null or empty (every one given the checks' one value for them)"),
        _row("checks accept: filled fields wrong", name, filled_wrong, filled,
             "of the accepted fields with a value, those labelled wrong"),
    ]  # fmt: skip


def natural_patterns(root: Path) -> list[dict[str, object]]:
    """The natural study's wrong top-level fields on the notices judged by the reflection prompts
    and samples (the first of the balanced order: a wrong notice, then a right one), by pattern: the
    destination's contact (named only on an "Attn:" line or in a "Dear ...," salutation and left
    empty) and package weights written in grams and not converted (the output 1000 times the truth)."""
    from construct_eval import RunDir
    from construct_eval.data.datasets.synthetic import contact_phrasing
    from construct_eval.decide.policy import run_outputs

    judged_cell = det(NATURAL, "field", "reflection@top")
    judged = int(judged_cell.with_column("documents").value(root))
    run = RunDir(root / NATURAL.removesuffix("/metrics"), create=False)
    parsed = [r for r in run.iter_rows("labels") if not r.get("parse_failed")]
    order = balanced_order(parsed)  # the order the study judged its notices in
    labels = {r["id"]: r for r in parsed}
    records = {r["id"]: r for r in run.records()}
    outputs = run_outputs(run)
    wrong_fields = contact = named_by_greeting = grams = 0
    for doc in order[:judged]:
        by_top: dict[str, set[str]] = {}
        for f in labels[doc]["fields"]:
            if f["wrong"]:
                by_top.setdefault(re.split(r"[.\[]", f["path"], maxsplit=1)[0], set()).add(f["path"])
        wrong_fields += len(by_top)
        truth, output, text = records[doc]["ground_truth"], outputs[doc], records[doc]["request"]
        if by_top.get("destination") == {"destination.contact"}:
            contact += 1
            phrasing = contact_phrasing(text, truth["destination"]["contact"])
            named_by_greeting += phrasing in ("attention", "salutation") and is_empty(
                output["destination"].get("contact")
            )
        if "packages" in by_top and all(re.fullmatch(r"packages\[\d+\]\.weight_kg", p) for p in by_top["packages"]):
            pairs = list(zip(output["packages"], truth["packages"], strict=False))
            grams += len(output["packages"]) == len(truth["packages"]) and all(
                o["weight_kg"] == t["weight_kg"] or o["weight_kg"] == round(1000 * t["weight_kg"]) for o, t in pairs
            )
    positives = int(judged_cell.with_column("positives").value(root))
    if wrong_fields != positives:
        raise ValueError(
            f"{NATURAL}: {wrong_fields} wrong top-level fields in the first {judged} notices, the table {positives}"
        )
    name = run.path.name
    fields = int(judged_cell.with_column("n").value(root))
    return [
        _row("natural: wrong fields", name, wrong_fields, fields,
             f"wrong top-level fields of the first {judged} notices of the balanced order (those the reflection prompts and samples judged), of all their top-level fields"),
        _row("natural: destination contact", name, contact, wrong_fields,
             "of those, the destination whose only wrong part is its contact"),
        _row("natural: contact named only by Attn or Dear", name, named_by_greeting, contact,
             'of those, a contact the notice names only on an "Attn:" line or in a "Dear ...," salutation, left empty'),
        _row("natural: weights in grams", name, grams, wrong_fields,
             "of the wrong fields, the packages whose only wrong parts are weights written as the notice gives them in grams (1000 times the truth in kilograms)"),
    ]  # fmt: skip


def counts(root: Path = ROOT) -> str:
    """:data:`COUNTS` as it should be now (CSV text)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, COUNT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows([*checks_accept(root), *natural_patterns(root)])
    return out.getvalue()
