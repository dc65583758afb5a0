"""What the paper figures read, and which figure each row belongs in.

Readers of the tables the analyses stored in each run's ``metrics/`` folder (``evaluate``,
``calibrate``, ``bias``), never numbers typed in; and the selection that gives each figure one
message: a row (dataset, level, scorer) with fewer than :data:`MIN_CLASS` wrong (or right)
items, fewer than :data:`MIN_CLASS` documents with a wrong (or a right) item (the bootstrap
resamples documents), or no interval is too small to mean anything and goes to an appendix
figure (:func:`row_powered`); each scorer belongs to a group (the main
scores, the prompt orders, the combinations, the rest) and each group is drawn in its own figure,
at most :data:`~construct_eval.display.style.MAX_SERIES` series a panel.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from construct_eval.csv_tables import read_rows
from construct_eval.display.style import MAX_SERIES, PLANTED_LABELS, paper_dataset_label
from construct_eval.power import MIN_CLASS_ITEMS, too_wide
from construct_eval.provenance import stage_model
from construct_eval.reports.paper_comparison import family_tests
from construct_eval.reports.tables import RatingUse
from construct_eval.types import ScorerId

MIN_CLASS = MIN_CLASS_ITEMS
"""A row needs at least this many wrong and right items, and this many documents with a wrong and
with a right item, to be in a main figure."""
GROUPS = ("main", "orders", "combinations", "other")


@dataclass(frozen=True)
class Estimate:
    dataset: str
    level: str
    scorer: str
    value: float
    low: float
    high: float
    n: int
    prevalence: float
    underpowered: bool
    uses_labels: bool
    positives: int = 0
    documents: int = 0
    flat: bool = False  # a rating that does not vary (``rating_use`` "flat ..."): its AUROC is a coin's
    docs_wrong: int = 0  # documents with a wrong item among the row's items
    docs_right: int = 0  # documents with a right item among the row's items
    sid: ScorerId | None = None  # the scorer's identity, parsed once from ``scorer`` (None: not in the grammar)
    kind: str = ""  # the output kind the row is read within (``output_kinds.KINDS``); "" for every field
    common_values: int = 0  # a flat rating's values that hold at least 5% of its items (0: not said)
    top_share: str = ""  # the share of its most used value, as ``rating_use`` wrote it ("99%")
    covers_all: bool = True  # its common values hold every item (False: a few items hold other values)
    planted: str = ""  # the planted error kind the row is read on (``read_by_planted_kind``); "" for every field

    @property
    def flat_note(self) -> str:
        """What a flat row says of itself (:func:`flat_words`): "constant" (one value: its 0.5 says
        nothing), "96% one value" (">99% one value" where the share rounds to 100 without being
        all), "2 values" (the values holding at least 5% of its items: a threshold, not a scale),
        or "flat"."""
        return flat_words(
            self.low == self.high and not math.isnan(self.low), self.common_values, self.top_share, self.covers_all
        )

    @property
    def panel(self) -> str:
        """The panel the row is drawn in: its dataset, or its dataset and output kind."""
        return f"{self.dataset}\t{self.kind}" if self.kind else self.dataset

    def __post_init__(self) -> None:
        if self.sid is None:
            object.__setattr__(self, "sid", _parsed(self.scorer))

    @property
    def powered(self) -> bool:
        """Whether the row may be drawn in a main figure (:func:`row_powered`)."""
        return row_powered(self.n, self.positives, self.docs_wrong, self.docs_right, self.low, self.high)

    @property
    def weak(self) -> bool:
        """Drawn hollow: underpowered by the detection table's flag or by :func:`row_powered`."""
        return self.underpowered or not self.powered


def row_powered(n: int, positives: int, docs_wrong: int, docs_right: int, low: float, high: float) -> bool:
    """A row means something: at least :data:`MIN_CLASS` wrong and right items, at least
    :data:`MIN_CLASS` documents with a wrong item and with a right item (the bootstrap resamples
    documents: at the document level these are the wrong and right documents), and an interval."""
    classes = positives >= MIN_CLASS and n - positives >= MIN_CLASS
    documents = docs_wrong >= MIN_CLASS and docs_right >= MIN_CLASS
    return classes and documents and not (math.isnan(low) or math.isnan(high))


def _document_classes(run_dir: Path) -> list[dict[str, str]]:
    """The run's ``document_classes`` table (:mod:`~construct_eval.reports.document_classes`, written
    by ``evaluate``); empty where the run has none (no labels, or evaluated before it was stored)."""
    path = Path(run_dir) / "metrics" / "document_classes.csv"
    return read_rows(path) if path.exists() else []


def document_class_files(run_dirs: Iterable[Path]) -> list[Path]:
    """The runs' stored document counts (:func:`document_counts`), for a figure's inputs."""
    return [p for r in run_dirs if (p := Path(r) / "metrics" / "document_classes.csv").exists()]


def document_counts(run_dir: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """(level, scorer) -> (documents with a wrong item, documents with a right item) among each
    scorer's labelled items; empty if the run has no such counts (then each row falls back on its
    stored counts: see :func:`read_detection`)."""
    return {(r["level"], r["scorer"]): (int(r["docs_wrong"]), int(r["docs_right"]))
            for r in _document_classes(run_dir) if not r["fields"]}  # fmt: skip


def _float(text: Any) -> float:
    try:
        return float(text) if text not in (None, "") else math.nan
    except ValueError:
        return math.nan


def detection_rows(run_dir: Path) -> list[dict[str, str]]:
    """The stored detection table of a run (``construct-eval evaluate``)."""
    path = Path(run_dir) / "metrics" / "detection.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path}: run `construct-eval evaluate --run {run_dir}` first")
    return read_rows(path)


def _parsed(name: str | ScorerId) -> ScorerId | None:
    if isinstance(name, ScorerId):
        return name
    try:
        return ScorerId.parse(name)
    except ValueError:
        return None


def uses_labels(row: Mapping[str, str]) -> bool:
    sid = _parsed(row["scorer"])
    return str(row.get("uses_labels")).lower() == "true" or bool(sid and sid.uses_labels)


def flat_words(constant: bool, common_values: int, top_share: str, covers_all: bool = True) -> str:
    """What a flat rating says of itself in a figure: "constant" (one value: it orders nothing),
    "96% one value" (one value holds that share, no other 5%; ">99%" where it rounds to 100),
    "2 values" (a threshold, not a scale; "mostly 2 values" where a few items hold others), or "flat"."""
    if constant:
        return "constant"
    if common_values == 1 and top_share:  # not constant, so a share that rounds to 100% is over 99%
        return f"{'>99%' if top_share == '100%' else top_share} one value"
    if not common_values:
        return "flat"
    return f"{'' if covers_all else 'mostly '}{common_values} value{'s' if common_values > 1 else ''}"


def _review_flat_note(row: Mapping[str, Any]) -> str:
    """A detection row's :func:`flat_words` for its review curve ("" for a rating that varies or a
    score that is no rating): constant where it gave every item one value (``distinct_scores``)."""
    use = _rating_use(row.get("rating_use"))
    if not use["flat"]:
        return ""
    return flat_words(
        _float(row.get("distinct_scores")) == 1, use["common_values"], use["top_share"], use["covers_all"]
    )


def paper_flat_note(row: Mapping[str, Any]) -> str:
    """A paper-comparison row's :func:`flat_words` ("constant", "2 values", ...; "" for a rating
    that varies or a score that is no rating): read from its ``one_value`` and ``rating_use``
    on the items every method scored."""
    if row.get("one_value"):
        return "constant"
    use = _rating_use(row.get("rating_use"))
    return flat_words(False, use["common_values"], use["top_share"], use["covers_all"]) if use["flat"] else ""


def _rating_use(text: str | None) -> dict[str, Any]:
    """An :class:`Estimate`'s reading of a table's ``rating_use`` cell (:class:`RatingUse`): whether
    the rating is flat, how many values hold at least 5% of its items, the largest share ("99%"),
    and whether those values hold every item (their whole-percent shares add up to 100)."""
    use = RatingUse.parse(text or "")
    if use is None:
        return {"flat": False, "common_values": 0, "top_share": "", "covers_all": True}
    top = use.top_share
    return {
        "flat": use.kind == "flat",
        "common_values": len(use.shares),
        "top_share": "" if top is None else f"{top}%",
        "covers_all": sum(p for _, p in use.shares) >= 100,
    }


def read_detection(run_dir: Path, metric: str = "auroc") -> list[Estimate]:
    """The stored detection table of a run, one estimate of ``metric`` per row that has one."""
    out = []
    docs = document_counts(run_dir)
    table = detection_rows(run_dir)
    wrong_docs = max((int(float(r.get("positives") or 0)) for r in table if r["level"] == "document"), default=None)
    for r in table:
        value = _float(r.get(metric))
        if math.isnan(value):
            continue  # one class only: no detection metric
        n, positives = int(float(r.get("n") or 0)), int(float(r.get("positives") or 0))
        documents = int(float(r.get("documents") or 0))
        if r["level"] == "document":
            fallback = (positives, n - positives)
        else:  # no labels to count from: at most this many documents hold a wrong (right) item
            most = min(positives, documents, wrong_docs if wrong_docs is not None else documents)
            fallback = (most, min(n - positives, documents))
        docs_wrong, docs_right = docs.get((r["level"], r["scorer"]), fallback)
        out.append(
            Estimate(
                dataset=Path(run_dir).name, level=r["level"], scorer=r["scorer"], value=value,
                low=_float(r.get(f"{metric}_low")), high=_float(r.get(f"{metric}_high")),
                n=int(float(r.get("n") or 0)), prevalence=_float(r.get("prevalence")),
                underpowered=bool(r.get("underpowered")), uses_labels=uses_labels(r),
                positives=int(float(r.get("positives") or 0)), documents=int(float(r.get("documents") or 0)),
                docs_wrong=docs_wrong, docs_right=docs_right, **_rating_use(r.get("rating_use")),
            )
        )  # fmt: skip
    return out


KIND_LABELS = {"value": "filled fields", "null or empty": "empty fields"}
"""The output kinds (``detection_by_output_kind``'s ``fields`` column) as a reader names them, in
the order the figures draw them: the filled fields, where an extractor's errors are, first."""


def read_by_kind(run_dir: Path) -> list[Estimate]:
    """The AUROC rows of a run's field table split by output kind (``detection_by_output_kind``),
    one estimate per scorer and kind (NaN where the kind has one class only: never powered); empty
    if the run has no such table. ``flat``: a rating flat within the kind, or a score with one
    value there (its interval is a point: its 0.5 says nothing)."""
    path = Path(run_dir) / "metrics" / "detection_by_output_kind.csv"
    if not path.exists():
        return []
    flags = {r["scorer"]: r for r in detection_rows(run_dir) if r["level"] == "field"}
    docs = kind_document_counts(run_dir)
    out = []
    for r in read_rows(path):
        value = _float(r.get("auroc"))
        if r["fields"] not in KIND_LABELS or r["scorer"] not in flags:
            continue
        low, high = _float(r.get("auroc_low")), _float(r.get("auroc_high"))
        n, wrong = int(float(r["n"])), int(float(r["wrong"]))
        docs_wrong, docs_right = docs.get((r["scorer"], r["fields"]), (0, 0))
        use = _rating_use(r.get("rating_use"))
        use["flat"] = use["flat"] or low == high
        out.append(
            Estimate(
                dataset=Path(run_dir).name, level="field", scorer=r["scorer"], value=value,
                low=low, high=high, n=n,
                prevalence=_float(r.get("prevalence")), underpowered=too_wide(low, high), uses_labels=uses_labels(flags[r["scorer"]]),
                positives=wrong, documents=0, docs_wrong=docs_wrong, docs_right=docs_right, kind=r["fields"],
                **use,
            )
        )  # fmt: skip
    return out


def read_by_planted_kind(run_dir: Path) -> list[Estimate]:
    """The AUROC rows of a run's table per planted error kind within output kinds
    (``detection_by_planted_kind_within_output_kind``: each kind's wrong fields with a value, or
    left empty, against the correct fields of the same output kind), one estimate per field
    scorer, planted kind (``planted``) and output kind (``kind``); empty if the run planted no
    errors. A row's power is a main row's (:func:`row_powered`). ``flat``: one value among the
    row's fields (an AUROC of 0.5 with no spread: it says nothing)."""
    path = Path(run_dir) / "metrics" / "detection_by_planted_kind_within_output_kind.csv"
    if not path.exists():
        return []
    flags = {r["scorer"]: r for r in detection_rows(run_dir) if r["level"] == "field"}
    out = []
    for r in read_rows(path):
        if r["kind"] not in PLANTED_LABELS or r["scorer"] not in flags or r["fields"] not in KIND_LABELS:
            continue  # "unplanted" (none in a controlled run), or a scorer the detection table lacks
        wrong, correct = int(float(r["n_wrong"])), int(float(r["n_correct"]))
        low, high = _float(r.get("auroc_low")), _float(r.get("auroc_high"))
        out.append(
            Estimate(
                dataset=Path(run_dir).name, level="field", scorer=r["scorer"], value=_float(r.get("auroc")),
                low=low, high=high, n=wrong + correct, prevalence=wrong / max(1, wrong + correct),
                underpowered=too_wide(low, high), uses_labels=uses_labels(flags[r["scorer"]]), positives=wrong,
                docs_wrong=int(float(r["docs_wrong"])), docs_right=int(float(r["docs_correct"])),
                flat=low == high == _float(r.get("auroc")) == 0.5, kind=r["fields"], planted=r["kind"],
            )
        )  # fmt: skip
    return out


def kind_document_counts(run_dir: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """(field scorer, output kind) -> (documents with a wrong item, documents with a right item)
    among the scorer's labelled fields of that kind (the bootstrap unit is the document); empty
    where the run's outputs cannot be rebuilt (no row is then powered)."""
    return {(r["scorer"], r["fields"]): (int(r["docs_wrong"]), int(r["docs_right"]))
            for r in _document_classes(run_dir) if r["fields"]}  # fmt: skip


def review_budgets(rows: Sequence[Mapping[str, str]]) -> list[int]:
    """The review budgets (in %) a detection table has intervals for."""
    found = {int(k[len("recall@") : -len("%_low")]) for r in rows for k in r if re.fullmatch(r"recall@\d+%_low", k)}
    return sorted(found)


def review_rows(run_dirs: Sequence[Path], level: str) -> list[dict[str, Any]]:
    """Long rows (dataset, scorer, budget, precision and recall with their bounds, and a flat
    rating's note) of ``level``."""
    rows = []
    for r in run_dirs:
        table = [row for row in detection_rows(r) if row["level"] == level]
        for budget in review_budgets(table):
            for row in table:
                if math.isnan(_float(row.get(f"recall@{budget}%"))):
                    continue
                rows.append(
                    {
                        "dataset": Path(r).name, "level": level, "scorer": row["scorer"], "budget": budget,
                        **{f"{w}{b}": _float(row.get(f"{w}@{budget}%{b}")) for w in ("precision", "recall")
                           for b in ("", "_low", "_high")},
                        "n": int(float(row["n"])), "positives": int(float(row.get("positives") or 0)),
                        "prevalence": _float(row.get("prevalence")), "underpowered": bool(row.get("underpowered")),
                        "uses_labels": uses_labels(row), "flat_note": _review_flat_note(row),
                    }
                )  # fmt: skip
    return rows


def reliability_bins(run_dirs: Sequence[Path]) -> list[dict[str, str]]:
    """The stored reliability bins of every run (``calibrate``), each with its dataset."""
    bins = []
    for r in run_dirs:
        path = Path(r) / "metrics" / "reliability.csv"
        if path.exists():
            bins += [{**b, "dataset": Path(r).name} for b in read_rows(path)]
    return bins


def bias_rows(run_dirs: Sequence[Path], value: str) -> tuple[list[dict[str, str]], list[Path]]:
    """The stored document-order shifts of ``value`` (``rating`` or ``expected_rating``) of every
    run that has them, each with its run, and the files read."""
    suffix = "" if value == "rating" else "_expected_rating"
    rows, inputs = [], []
    for r in run_dirs:
        path = Path(r) / "metrics" / f"bias_pairs_doc{suffix}.csv"
        if path.exists():
            rows += [{**row, "run": Path(r).name} for row in read_rows(path)]
            inputs.append(path)
    return rows, inputs


@dataclass(frozen=True)
class ValueTable:
    """What each value of a written rating means, as ``calibrate`` stored it for one scorer."""

    dataset: str
    level: str
    scorer: str
    rows: list[dict[str, str]]
    path: Path

    @property
    def n(self) -> int:
        return sum(int(_float(r["n"])) for r in self.rows)

    @property
    def wrong(self) -> int:
        return sum(int(_float(r.get("wrong"))) for r in self.rows if not math.isnan(_float(r.get("wrong"))))


def out_of_order(t: ValueTable, min_items: int) -> tuple[float, dict[str, str], dict[str, str]] | None:
    """The widest pair of values of ``t`` (each with at least ``min_items`` items) where the lower
    value is wrong less often than the higher one, their Wilson intervals apart: (gap, lower, higher)."""
    kept = sorted(
        (r for r in t.rows if _float(r["n"]) >= min_items and not math.isnan(_float(r.get("error_rate")))),
        key=lambda r: _float(r["value"]),
    )
    pairs = [
        (_float(hi["error_low"]) - _float(lo["error_high"]), lo, hi)
        for i, lo in enumerate(kept)
        for hi in kept[i + 1 :]
        if _float(lo["error_high"]) < _float(hi["error_low"])
    ]
    return max(pairs, key=lambda p: p[0]) if pairs else None


ONE_VALUE_SHARE = 0.95
"""A rating that gives one value to at least this share of its items is a point, not a scale: the
meaning figure says so in one line instead of drawing a panel."""

READABLE_ITEMS = 20
"""A value of a rating with fewer items has a Wilson interval spanning most of 0-1: the meaning
figure draws it grey, and a rating with only one value this full is a point (a line, not a panel)."""


@dataclass(frozen=True)
class MeaningPanel:
    """One cell of the meaning figure: a written rating's value table (for a field rating, within
    the fields the output filled) and, for a field rating, its rows within the fields the output
    left null or empty (drawn as a note)."""

    table: ValueTable
    empty: tuple[dict[str, Any], ...] = ()

    @property
    def column(self) -> str:
        if self.table.level == "field":
            return "per filled field, forced"
        return "per output, free" if "ask:free" in self.table.scorer else "per output, forced"

    @property
    def one_value(self) -> tuple[float, float] | None:
        """(value, share) of the fullest value where it holds at least :data:`ONE_VALUE_SHARE` of
        the items, or where no other value holds :data:`READABLE_ITEMS` (a panel would draw one
        readable point): a line, not a panel."""
        counts = [(_float(r["n"]), _float(r["value"])) for r in self.table.rows]
        total = sum(n for n, _ in counts)
        n, v = max(counts) if counts else (0.0, math.nan)
        readable = sum(k >= READABLE_ITEMS for k, _ in counts)
        return (v, n / total) if total and (n >= ONE_VALUE_SHARE * total or readable == 1) else None


def run_files() -> tuple[str, ...]:
    """What the manifest hashes from each run: its description and labels, and every file the
    scorer registry's scorers read rows or costs from."""
    from construct_eval import scorer_registry

    return ("run.json", "labels.jsonl", *(f"{f}.jsonl" for f in scorer_registry.run_files() if f != "labels"))


def value_tables(run_dir: Path) -> list[ValueTable]:
    """The stored value tables of the judges' written ratings of a run, matched to their scorer
    through the detection table (the file name is a slug of the item key). A rating with few
    values carries the per-value means of its ``rating_readings`` out-of-fold isotonic and Platt
    predictions (``calibrate`` writes them: no curve is fitted through three points), so figure and
    Brier agree; a table of one value is left out (not calibrated)."""
    from construct_eval.reports.tables import file_slug

    run_dir = Path(run_dir)
    out = []
    for r in detection_rows(run_dir):
        sid = _parsed(r["scorer"])
        if sid is None or not sid.is_written_rating:
            continue
        path = run_dir / "metrics" / f"values_{file_slug(r['level'] + ':' + r['scorer'])}.csv"
        if path.exists():
            rows = read_rows(path)
            if len(rows) >= 2:
                out.append(ValueTable(run_dir.name, r["level"], r["scorer"], rows, path))
    return out


# --------------------------------------------------------------------------- selection


def powered(estimates: Iterable[Estimate]) -> bool:
    """Some of a dataset's rows at one level mean something: one label-free row passes
    :func:`row_powered` (the figures then draw only the rows that pass)."""
    return any(e.powered and not e.uses_labels for e in estimates)


def panel_granularity(estimates: Iterable[Estimate]) -> str:
    """The field granularity a dataset's main panel shows ("top" or "leaf"): the one the judge
    rated, where its field ratings exist at one granularity only (the judge is what the figures
    are about: a panel without it would say "not run" of a judge that was run); otherwise the one
    whose largest scorer has the most items of its smaller class (ties: top-level fields)."""
    best: dict[str, int] = {}
    judged: set[str] = set()
    for e in estimates:
        g = (e.sid.granularity if e.sid else None) or "top"
        best[g] = max(best.get(g, 0), min(e.positives, e.n - e.positives))
        if e.sid is not None and e.sid.is_judge and not e.sid.is_combination:
            judged.add(g)
    if len(judged) == 1:
        return judged.pop()
    if not best:
        return "top"
    return max(sorted(best), key=lambda g: (best[g], g == "top"))


_ROLE_ORDER = ("judge", "judge-free", "expected", "expected-free", "p-correct", "token_logprob", "consistency")
_ROLE_ORDER += ("reflection", "tlm", "lowest", "lowest-expected", "combo", "fitted", "prior")


def role(scorer: str) -> str:
    """What a score is, for ordering rows: the judge's ratings first, the baselines last."""
    sid = _parsed(scorer)
    if sid is None:
        return "other"
    if sid.is_combination:
        return "fitted" if sid.uses_labels else "combo"
    if sid.uses_labels:
        return "prior"
    if sid.is_judge:
        free = "ask:free" in (sid.variant or "")
        if sid.aggregate:
            return "lowest-expected" if sid.value else "lowest"
        return ("expected" if sid.value else "judge") + ("-free" if free else "")
    return sid.family


def order_key(scorer: str) -> tuple[int, int, str]:
    """Rows in reading order: by role, the default prompt order before the others, then by name."""
    r = role(scorer)
    sid = _parsed(scorer)
    other_order = bool(sid and set((sid.variant or "").split("|")) - {"", "sec:r-s-o", "fields:original", "ask:free"})
    return (_ROLE_ORDER.index(r) if r in _ROLE_ORDER else len(_ROLE_ORDER), int(other_order), scorer)


def group(scorer: str, granularity: str = "top") -> str:
    """Which figure a scorer belongs in: "main" (each score in its default form, on the panel's
    granularity), "orders" (a judge under another prompt order), "combinations", or "other"."""
    sid = _parsed(scorer)
    if sid is None:
        return "other"
    if sid.is_combination:
        return "combinations"
    if (sid.granularity or "top") != granularity:
        return "other"
    if sid.is_judge:
        parts = set((sid.variant or "").split("|")) - {"", "sec:r-s-o", "fields:original", "ask:free"}
        if parts:
            return "orders"
        free = "ask:free" in (sid.variant or "")
        if (sid.aggregate and not sid.value) or (free and sid.value):
            return "other"  # the written rating's minimum is flat; the free recipe's expected rating
    if sid.aggregate and not sid.is_judge:
        return "other"
    return "main"


def error_rank(how: str) -> int:
    """Where a dataset whose errors arose ``how`` ("planted errors", "generator's errors") comes
    among the figures: the main study's planted errors, then planted near misses, then the
    generators' own errors."""
    how = how.split(",")[0]
    return 0 if how == "planted errors" else 1 if how.startswith("planted") else 2


def generators_errors(dataset: str) -> bool:
    """Whether a run's errors are ones a generator made (its label: "generator's errors"), not ones
    the package planted (planted errors, planted near misses): the main figures that ask which
    score finds errors draw only these; their planted-error panels are appendix figures."""
    return error_rank(paper_dataset_label(dataset)[1]) == 2


def figure_pieces(
    datasets: Sequence[str],
    present: Mapping[str, set[str]],
    scorers: Sequence[str],
    how: Mapping[str, str],
    label: Mapping[str, str] | None = None,
    limit: int = MAX_SERIES,
) -> list[tuple[list[str], list[str]]]:
    """(datasets, scorers) of each figure, so that a dataset's scores stay in one figure beside
    each other wherever they fit: the datasets (planted errors first, :func:`error_rank` by
    ``how``, else in the given order) join the first group whose scores, with their own
    (``present``), number at most ``limit``; a dataset with more is a group of its own, and only
    its scores continue in a second figure (:func:`chunks`). ``scorers``: every score, in order;
    ``label``: each score's row label, where two internal names share a row (counted once)."""
    ordered = sorted(datasets, key=lambda d: error_rank(how[d]))
    row = label or {}
    groups: list[tuple[list[str], set[str]]] = []
    for d in ordered:
        mine = {row.get(s, s) for s in present.get(d, set())}
        for members, have in groups:
            if len(have | mine) <= limit:
                members.append(d)
                have |= mine
                break
        else:
            groups.append(([d], set(mine)))
    out: list[tuple[list[str], list[str]]] = []
    for members, _ in groups:
        theirs = set().union(*(present.get(d, set()) for d in members))
        for part in chunks(
            [s for s in scorers if s in theirs], limit, {d: present[d] for d in members if d in present}
        ):
            out.append(([d for d in members if present.get(d, set()) & set(part)], part))
    return out


def chunks(
    names: Sequence[str], limit: int = MAX_SERIES, panels: Mapping[str, set[str]] | None = None
) -> list[list[str]]:
    """``names`` in order, in pieces (one figure each) such that no panel draws more than
    ``limit`` of a piece; ``panels``: what each panel has (by default: one panel, every name)."""
    panels = panels if panels is not None else {"": set(names)}
    out: list[list[str]] = [[]]
    for name in names:
        trial = [*out[-1], name]
        if out[-1] and any(len(have & set(trial)) > limit for have in panels.values()):
            out.append([name])
        else:
            out[-1] = trial
    return out


# --------------------------------------------------------------------------- the paper's comparison

PAPER_COMPARISON = "paper_comparison.csv"
"""The table ``construct-eval paper-comparison`` stores in a run's ``metrics/``: CONSTRUCT (the
``construct`` scorer, the authors' TLM 0.0.3) against its baselines on the items every method
of a level scored (:mod:`construct_eval.reports.paper_comparison`)."""
PAPER_METHODS = ("construct", "construct-gen", "judge-doc", "judge-field", "judge-field-forced", "token-logprob")
"""The methods the CONSTRUCT figure draws, in its order: CONSTRUCT, CONSTRUCT with the generator's
parts, and the paper's baselines (the judge per output, per field, per field forced, the
generator's token log-probs). The table's rank combination is this package's, not CONSTRUCT: it
is in the table only."""


PAPER_PLANNED = 200
"""Notices the natural-error study plans to have scored by CONSTRUCT and the judge
(``results/runs/natural_study.sh``: ``REFLECT_DOCS=200``): the CONSTRUCT figure is interim until
its table holds that many."""


def same_ranking(rows: Sequence[Mapping[str, Any]], key: str, ref: str = "construct") -> bool:
    """Whether ``key``'s rows rank every level's items exactly as ``ref``'s do: each of its paired
    differences from ``ref`` (AUROC, recall at each budget) is 0 with an interval of [0, 0] in the
    table, on every level where it has a row (and it has one)."""
    mine = [r for r in rows if r["key"] == key and not math.isnan(_float(r.get("auroc")))]
    if not mine or not any(r["key"] == ref for r in rows):
        return False
    for r in mine:
        diffs = [k for k in r if k.endswith("_diff") and not k.startswith("minus")]
        if not diffs:
            return False
        for d in diffs:
            if any(_float(r.get(f"{d}{end}")) != 0.0 for end in ("", "_low", "_high")):
                return False
    return True


def read_paper_comparison(run_dir: Path) -> list[dict[str, Any]]:
    """The rows of a run's paper comparison (:data:`PAPER_COMPARISON`) for the methods of
    :data:`PAPER_METHODS`, each with its run (``dataset``) and its numbers as floats (NaN where
    empty: a method with no score at a level, such as the judge per output's fields) and the
    number of paired tests its AUROC's Holm family holds (``holm_tests``: those of methods not drawn
    too), and the run's own outputs and wrong ones (``run_n``, ``run_wrong``: its largest per-output
    detection row), and the CONSTRUCT preset the run used with its calls an output (``preset``,
    ``calls_per_output``, from ``run.json``); empty if the run has no such table."""
    path = Path(run_dir) / "metrics" / PAPER_COMPARISON
    if not path.exists():
        return []
    rows = []
    every = read_rows(path)
    # the run's own outputs and wrong ones (its largest per-output detection row): the outputs compared
    # were judged in a balanced order, so their share wrong is not the run's
    whole = max((e for e in read_detection(Path(run_dir)) if e.level == "document"), key=lambda e: e.n, default=None)
    run_json = Path(run_dir) / "run.json"  # which CONSTRUCT ran: its preset and calls an output
    construct = (json.loads(run_json.read_text()).get("construct") or {}) if run_json.exists() else {}

    for r in every:
        if r["key"] not in PAPER_METHODS:
            continue
        tests = family_tests(every, r.get("auroc_holm_family", ""))
        row: dict[str, Any] = {**r, "dataset": Path(run_dir).name, "holm_tests": tests}
        if whole is not None:
            row |= {"run_n": whole.n, "run_wrong": whole.positives}
        row |= {"preset": construct.get("preset", ""), "calls_per_output": construct.get("calls_per_output", "")}
        for k, v in r.items():
            numeric = k in ("n", "documents", "wrong", "auroc") or k.startswith(("auroc_", "precision@", "recall@"))
            if numeric and not k.endswith(("_ranking", "_family")):
                row[k] = _float(v)
        rows.append(row)
    return rows


_TYPES = {
    "scorer": str,
    "field": str,
    "fields": str,
    "n": int,
    "wrong": int,
    "constant": lambda v: v == "True",
    "powered": lambda v: v == "True",
    "few_items": lambda v: v == "True",
}
"""How a stored within-kind table's cells read back (every other cell a float)."""


def _typed(row: Mapping[str, str], skip: Sequence[str]) -> dict[str, Any]:
    """A stored row with its cells as the table wrote them (ints, booleans, floats); an empty cell
    (a reading that did not fit) left out."""
    return {k: _TYPES.get(k, float)(v) for k, v in row.items() if k not in skip and v != ""}


def kind_value_rows(run_dir: Path, scorer: str) -> dict[str, list[dict[str, Any]]]:
    """What each value of a field rating means within each output kind: kind -> one row per value
    (``value``, ``n``, ``wrong``, ``error_rate`` with its Wilson interval, ``few_items``, the naive
    reading, and the out-of-fold isotonic and Platt readings fitted within that kind, where they
    fit), read from the run's ``values_by_output_kind`` table
    (:func:`~construct_eval.reports.within_kind.values_by_output_kind_table`); empty where the run
    has none (its outputs cannot be rebuilt)."""
    path = Path(run_dir) / "metrics" / "values_by_output_kind.csv"
    out: dict[str, list[dict[str, Any]]] = {}
    for r in read_rows(path) if path.exists() else []:
        if r["scorer"] == scorer:
            out.setdefault(r["fields"], []).append(_typed(r, ("scorer", "fields")))
    return out


def within_field_rows(run_dir: Path, scorer: str) -> list[dict[str, Any]]:
    """Per field (top-level, or leaf with its list indices dropped), ``scorer``'s AUROC among the
    values the output filled, with a document-bootstrap 95% interval, read from the run's
    ``within_field`` table (:func:`~construct_eval.reports.within_kind.within_field_table`): what
    the score knows about a field's values beyond which field they are in. ``powered``: at least
    :data:`MIN_CLASS` wrong and right values (one value a document, so as many documents);
    ``constant``: one score on every value."""
    path = Path(run_dir) / "metrics" / "within_field.csv"
    return [{"dataset": Path(run_dir).name, **_typed(r, ())}
            for r in (read_rows(path) if path.exists() else []) if r["scorer"] == scorer]  # fmt: skip


def run_models(run_dir: Path) -> dict[str, str]:
    """The models a run used, from its ``run.json``: ``judge`` (the LLM judge), ``generator`` (the
    model that wrote the outputs, absent where errors were planted) and ``construct`` (CONSTRUCT's
    LLM), each the endpoint's model id; a part the run did not have is left out."""
    import json

    path = Path(run_dir) / "run.json"
    if not path.exists():
        return {}
    run = json.loads(path.read_text())
    return {part: model for part in ("judge", "generator", "construct") if (model := stage_model(run, part))}


def small_share(share: float) -> str:
    """A share that may be small, as a figure and its caption both write it: to a tenth of a percent
    under 10% (3 of 200 is "1.5%", which whole percent rounded to "2%" beside a table's 1.5%), else
    :func:`pct_of`'s whole percent."""
    return f"{100 * share:.1f}%" if 0 < share < 0.1 else pct_of(share, 1)


def pct_of(part: float, whole: float) -> str:
    """A share in whole percent that says "100%" only of all and "0%" only of none (">99%", "<1%")."""
    text = f"{100 * part / whole:.0f}%"
    if text == "100%" and part < whole:
        return ">99%"
    if text == "0%" and part > 0:
        return "<1%"
    return text
