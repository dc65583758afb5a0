"""The Markdown form of a stored table, for a reader: display names, at most about ten columns.

Every analysis writes a table twice (:func:`~construct_eval.reports.tables.write_table`): a CSV
with every column under its internal name, which the code, the guard and the findings read, and a
Markdown file that the README, FINDINGS and notebooks link. This module makes the second from the
first, so the two can never disagree:

- a number and its interval are one cell, ``0.612 [0.559, 0.667]`` (``x`` with ``x_low`` and
  ``x_high``, or a difference with ``low``/``high``), every number with three decimals (the
  rounding rule of every printed table), counts as integers;
- scorer names are the reader's names (:func:`~construct_eval.scorer_labels.display_name`);
- each kind of table shows the columns that answer its question (:data:`VIEWS`), under words;
  a table of another kind shows every column, its intervals merged;
- the Markdown says which CSV holds every column.

:func:`rewrite_markdown` makes the Markdown of a stored table again from its CSV (no analysis
runs): how the committed tables got this form, and how they keep it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from construct_eval.csv_tables import read_table as read_csv
from construct_eval.scorer_labels import display_name, variant_label
from construct_eval.stats.calibrators import calibrator_words

SCORER_COLUMNS = ("scorer", "a", "b")
"""Columns whose values are scorer names: shown by their display names."""
ORDER_COLUMNS = ("variant_a", "variant_b")
METHOD_COLUMNS = ("method", "reading")
"""Columns naming a calibration map (``platt``, ``netcal-beta``) or a reading of one
(``platt (out of fold)``): shown in a reader's words (:func:`calibrator_words`)."""
"""Columns whose values are prompt orders: shown in words."""

HEADERS = {
    "level": "level", "scorer": "score", "method": "calibration", "n": "items", "documents": "documents",
    "positives": "wrong", "wrong": "wrong", "prevalence": "share wrong", "auroc": "AUROC", "auprc": "AUPRC",
    "rating_use": "rating values used", "unscored": "unscored", "note": "note", "brier": "Brier",
    "ece_mass": "ECE (equal mass)", "field": "field", "fields": "fields", "granularity": "fields scored",
    "minus_pooled": "minus all fields", "minus_prior": "minus field prior", "reading": "reading",
    "ece_per_value": "ECE per value", "brier_minus_naive": "Brier minus naive", "brier_minus_base_rate":
    "Brier minus base rate", "a": "score a", "b": "score b", "auroc_a": "AUROC a", "auroc_b": "AUROC b",
    "difference": "a minus b", "p_holm": "p (Holm)", "holm": "Holm p", "ranking": "ranking", "variant_a": "order a",
    "variant_b": "order b", "mean_shift": "mean shift b - a", "share_changed": "share changed",
    "wilcoxon_p_holm": "Wilcoxon p (Holm)", "sign_p_holm": "sign test p (Holm)", "weighted_kappa": "weighted kappa",
    "auroc_diff": "AUROC b - a", "alpha": "alpha", "splits": "splits", "violation_rate": "violated (split halves)",
    "violation_rate_run_as_population": "violated (run as population)", "mean_coverage": "share accepted",
    "naive_violation_rate": "naive: violated (split halves)", "naive_mean_coverage": "naive: share accepted",
    "n_documents": "documents", "threshold": "threshold", "coverage": "share accepted",
    "calibration_risk": "error among accepted", "risk_bound": "risk bound", "documents_needed": "documents needed", "more_labels": "more labels",
    "value": "value", "error_rate": "error rate", "naive": "naive", "isotonic": "isotonic", "platt": "Platt",
    "beta": "Beta", "histogram": "histogram", "kind": "planted kind", "n_wrong": "wrong", "n_correct": "right",
    "docs_wrong": "documents wrong", "docs_correct": "documents right", "recall_at_10pct": "recall, 10% reviewed",
    "review_share_documents@90%": "documents reviewed for 90% recall", "realised_recall": "recall reached",
    "few_items": "few items",
}  # fmt: skip
"""Words for the internal column names a reader sees."""

INTERVALS = {"difference": ("low", "high"), "brier_minus_naive": ("diff_low", "diff_high"),
             "brier_minus_base_rate": ("base_diff_low", "base_diff_high"), "mean_shift": ("shift_low", "shift_high"),
             "error_rate": ("error_low", "error_high")}  # fmt: skip
"""Interval columns not named ``x_low``/``x_high``."""


@dataclass(frozen=True)
class View:
    """A reader's columns for one kind of table: each an internal column (its interval merged in)
    or a combined cell (:data:`COMBINED`); a column absent from the rows is left out."""

    columns: tuple[str, ...]


COMBINED = {
    "items (documents, wrong)": ("n", "documents", "positives"),
    "precision / recall, 10% reviewed": ("precision@10%", "recall@10%"),
    "items (wrong)": ("n", "wrong"),
    "mean a / b": ("mean_a", "mean_b"),
    "notes": ("underpowered", "note", "uses_labels"),
}
"""Cells made of several columns: ``n (documents, wrong)``, ``p / r``."""

DETECTION = View(
    ("level", "scorer", "items (documents, wrong)", "auroc", "auprc", "precision / recall, 10% reviewed", "rating_use",
     "unscored", "notes")
)  # fmt: skip
VIEWS: dict[str, View] = {
    "detection": DETECTION,
    "detection_other_reading": DETECTION,
    "calibration": View(("level", "scorer", "field", "method", "n", "prevalence", "brier", "ece_mass",
                         "review_share_documents@90%", "realised_recall")),
    "detection_by_output_kind": View(("scorer", "granularity", "fields", "items (wrong)", "rating_use", "auroc",
                                      "minus_pooled", "minus_prior", "note")),
    "rating_readings": View(("level", "scorer", "reading", "n", "documents", "brier", "ece_per_value",
                             "brier_minus_naive", "brier_minus_base_rate")),
    "paired": View(("fields", "level", "a", "b", "n", "auroc_a", "auroc_b", "difference", "p_holm", "ranking")),
    "bias_pairs": View(("variant_a", "variant_b", "n", "mean a / b", "mean_shift", "share_changed",
                        "wilcoxon_p_holm", "weighted_kappa", "wrong", "auroc_diff")),
    "decision_validity": View(("level", "scorer", "alpha", "splits", "violation_rate",
                               "violation_rate_run_as_population", "mean_coverage", "naive_violation_rate",
                               "naive_mean_coverage")),
    "decision_thresholds": View(("level", "scorer", "alpha", "n_documents", "threshold", "coverage",
                                 "calibration_risk", "risk_bound", "documents_needed", "more_labels", "uses_labels")),
    "decision_aurc": View(("level", "scorer", "n", "documents", "aurc", "aurc_random", "aurc_oracle", "eaurc",
                           "risk_at_80%", "uses_labels")),
    "decision_ppi": View(("level", "scorer", "n_labelled", "true_rate", "ppi_coverage", "classical_coverage",
                          "ppi_width", "classical_width", "effective_labels")),
    "decision_learning": View(("level", "scorer", "method", "labelled_documents", "brier", "ece")),
    "decision_smooth_ece": View(("level", "scorer", "method", "n", "brier", "ece_width", "ece_mass", "smooth_ece")),
    "values": View(("value", "n", "wrong", "error_rate", "few_items", "naive", "isotonic", "platt", "beta",
                    "histogram")),
    "construct_competence": View(("judge", "score", "level", "competence", "auroc", "auroc_seed_min",
                                  "auroc_seed_max", "n", "n_wrong", "underpowered")),
    "construct_parts": View(("template", "level", "n", "n_wrong", "auroc", "unreadable_share", "no_score_tag",
                             "at_half", "flags_right", "misses_wrong")),
}  # fmt: skip
"""The reader's columns of each kind of table, by the start of its file name."""


def view_for(stem: str) -> View | None:
    """The view of a table named ``stem`` (the longest kind its name starts with), if any."""
    kinds = [k for k in VIEWS if stem == k or stem.startswith(k + "_")]
    return VIEWS[max(kinds, key=len)] if kinds else None


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None or v == "":
        return None
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def fmt(v: Any) -> str:
    """One cell: three decimals for a fraction or a score, integers as integers, text on one line."""
    if v is None:
        return ""
    if isinstance(v, str):
        x = _number(v)
        if x is None or re.fullmatch(r"-?\d+", v.strip()):
            return " ".join(v.split()).replace("|", "\\|")
        v = x
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.3f}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def _interval_columns(name: str) -> tuple[str, str]:
    return INTERVALS.get(name, (f"{name}_low", f"{name}_high"))


def _flag(v: Any) -> str:
    return "yes" if str(v) == "True" else ""


def _cell(row: Mapping[str, Any], column: str) -> str:
    if column == "notes":
        parts = [fmt(row.get(c)) for c in COMBINED[column][:-1]]
        parts += ["uses labels"] if _flag(row.get("uses_labels")) else []
        return "; ".join(p for p in parts if p)
    if column in COMBINED:
        parts = [fmt(row.get(c)) for c in COMBINED[column]]
        if not parts[0]:
            return ""
        if column.startswith("items"):
            rest = [p for p in parts[1:] if p]
            return f"{parts[0]} ({', '.join(rest)})" if rest else parts[0]
        return " / ".join(parts)
    value = row.get(column)
    if column in SCORER_COLUMNS and isinstance(value, str) and value:
        return fmt(display_name(value))
    if column in ORDER_COLUMNS and isinstance(value, str) and value:
        return fmt(variant_label(value))
    if column in METHOD_COLUMNS and isinstance(value, str) and value:
        method, _, rest = value.partition(" (")
        return fmt(calibrator_words(method) + (f" ({rest}" if rest else ""))
    if column == "ranking" and isinstance(value, str) and value.endswith((" higher", " lower")):
        name, _, verdict = value.rpartition(" ")  # a score's name and how it ranks: in a reader's words
        return fmt(display_name(name) + " " + verdict)
    if str(value) in ("True", "False"):
        return _flag(value)
    if column == "value" and (x := _number(value)) is not None and x.is_integer():
        return str(int(x))
    text = fmt(value)
    low, high = _interval_columns(column)
    lo, hi = fmt(row.get(low)), fmt(row.get(high))
    if text and lo and hi and "nan" not in (text, lo, hi):  # a bound that is no number: no interval was drawn
        text += f" [{lo}, {hi}]"
    if text and column == "auroc_diff" and row.get("auroc_underpowered"):
        text += " (underpowered)"
    return text


def _present(rows: Sequence[Mapping[str, Any]], column: str) -> bool:
    names = COMBINED.get(column, (column,))
    names = names if column == "notes" else names[:1]
    return any(r.get(c) not in (None, "", "False") for r in rows for c in names)


def reader_columns(stem: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The columns a reader sees of table ``stem``: its view's (those the rows have), else every
    column that is not another's interval."""
    view = view_for(stem)
    if view is not None:
        return [c for c in view.columns if _present(rows, c)]
    intervals = {x for c in columns for x in _interval_columns(c) if x in columns and c in columns}
    return [c for c in columns if c not in intervals]


def _header(column: str) -> str:
    return column if column in COMBINED else HEADERS.get(column, column.replace("_", " "))


def reader_markdown(
    stem: str,
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    title: str = "",
    chosen: Sequence[str] | None = None,
) -> str:
    """The Markdown table a reader sees of the rows of table ``stem`` (``columns``: the CSV's;
    ``chosen``: the columns to show of a table with no view)."""
    shown = reader_columns(stem, [c for c in chosen if c in columns] if chosen else columns, rows)
    lines = [f"## {title}", ""] if title else []
    lines.append("| " + " | ".join(_header(c) for c in shown) + " |")
    lines.append("|" + "|".join("---" for _ in shown) + "|")
    lines += ["| " + " | ".join(_cell(r, c) for c in shown) + " |" for r in rows]
    hidden = len(columns) - len(shown)
    if hidden > 0:
        lines += ["", f"Every column ({len(columns)}, internal names): [{stem}.csv]({stem}.csv)."]
    return "\n".join(lines) + "\n"


def rewrite_markdown(csv_path: Path) -> bool:
    """Make ``csv_path``'s Markdown again in the reader's form, keeping its title and any text
    after the table; True when it changed. A Markdown file that is not one table under a title
    (written by other code) is left as it is."""
    md = csv_path.with_suffix(".md")
    if not md.exists():
        return False
    text = md.read_text()
    lines = text.split("\n")
    table = [i for i, line in enumerate(lines) if line.startswith("|")]
    if not table or table != list(range(table[0], table[-1] + 1)):
        return False
    title = lines[0][3:] if lines[0].startswith("## ") else ""
    if table[0] not in (0, 2) or (title and table[0] != 2):
        return False
    tail = "\n".join(lines[table[-1] + 1 :])
    if tail.startswith("\nEvery column ("):  # the note this module writes: made again below
        tail = "\n".join(tail.split("\n")[2:])
    columns, rows = read_csv(csv_path)
    header = [c.strip() for c in lines[table[0]].strip("|").split("|")]
    if set(header) <= set(columns):  # internal names: written before this form, its columns chosen so
        table_text = reader_markdown(csv_path.stem, rows, columns, title, chosen=header)
    else:  # the reader's form already: made again when it is this module's form of the whole CSV
        table_text = reader_markdown(csv_path.stem, rows, columns, title)
        if header != [c.strip() for c in table_text.split("\n")[2].strip("|").split("|")]:
            return False  # its own columns (written by other code, or chosen by its writer)
    new = table_text.rstrip("\n") + "\n" + tail
    if new != text:
        md.write_text(new)
        return True
    return False
