"""The findings' named cells and the facts computed from them.

One function per finding (the name of its template in ``templates/``): the cells it quotes,
each by a name the template words (a table file, the column values that pick its row, the column),
the tables it links to, whether the README lists it, and the few facts a sentence rests on that
are not one cell (a ranking of runs, whether an interval holds chance). A fact that a sentence
takes for granted (the one template above chance, an error rate that rises then falls) is checked
here and stops the build with "rewrite the finding" when the tables no longer say it.

The functions read values (never quote them): every number the prose shows is quoted by the
template, through the ledger, so ``FINDINGS.cells.csv`` lists it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from construct_eval.csv_tables import read_rows
from construct_eval.reports.cells import Cell

RUNS = "results/runs"
MAIN = f"{RUNS}/financial_ner-sample600-controlled30/metrics"
GEN = f"{RUNS}/financial_ner-sample200/metrics"
SYN = f"{RUNS}/synthetic200-controlled30/metrics"
CLAIMS = f"{RUNS}/insurance_claims-controlled20/metrics"
NEAR = f"{RUNS}/financial_ner-sample200-nearmiss30/metrics"
TABLES = f"{RUNS}/natural-data_table_rebuild-qwen2.5-coder-1.5b-benchmark/metrics"
NATURAL = f"{RUNS}/natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package/metrics"
COUNTS = "results/FINDINGS.counts.csv"
"""Counts computed from the run files (:mod:`.counts`), one row each: ``key``, the ``run``,
``count`` of ``of`` (``share``), and ``what`` it counts."""

NATURAL_PLANNED = 200
"""Notices of the natural-error study to judge with every method before its finding joins the README."""
FORCED = "judge-doc[sec:r-s-o|fields:original]"
FREE = "judge-doc[sec:r-s-o|fields:original|ask:free]"


@dataclass
class Facts:
    """What a finding's template words: ``cells`` and computed values by name, the tables it
    cites (label, path from the repository) and whether the README lists it."""

    values: dict[str, Any]
    links: list[tuple[str, str]]
    in_readme: bool
    checks: list[str] = field(default_factory=list)
    readme_links: int | None = None
    """How many of ``links`` (the first) the README's short form cites: the tables its numbers come
    from (None: all)."""


class RewriteFinding(ValueError):
    """The tables no longer say what a finding's sentence takes for granted."""


def det(table: str, level: str, scorer: str, column: str = "auroc") -> Cell:
    return Cell(f"{table}/detection.csv", {"level": level, "scorer": scorer}, column)


def paired(table: str, a: str, b: str, column: str = "difference") -> Cell:
    return Cell(table, {"a": a, "b": b}, column)


def count(key: str, column: str = "count") -> Cell:
    """A count of :data:`COUNTS` by its key."""
    return Cell(COUNTS, {"key": key}, column)


def md(table: str) -> str:
    """The Markdown twin of a CSV table, the file a finding links to."""
    return table.replace(".csv", ".md")


def _holds_chance(root: Path, cell: Cell) -> bool:
    return (
        cell.with_column(f"{cell.column}_low").value(root) <= 0.5 <= cell.with_column(f"{cell.column}_high").value(root)
    )


REAL_ERRORS = ((GEN, "financial entities"), (NATURAL, "shipping notices"), (TABLES, "data tables"))
"""The runs with a generator's own errors (not planted) on which the plausibility checks were scored."""


def real_error_checks(root: Path) -> list[dict[str, Any]]:
    """The plausibility checks within filled top-level fields of each run with a generator's real
    errors, best first: each run's cell, its name, and whether its interval is below or holds
    chance (they vary from helpful to below chance, which no single "near chance" says)."""

    def cell(run: str) -> Cell:
        return Cell(f"{run}/detection_by_output_kind.csv",
                    {"scorer": "plausibility@top", "granularity": "top", "fields": "value"}, "auroc")  # fmt: skip

    def chance(c: Cell) -> str:
        low, high = c.with_column("auroc_low").value(root), c.with_column("auroc_high").value(root)
        return "below chance" if high < 0.5 else "near chance" if low <= 0.5 <= high else ""

    ranked = sorted(REAL_ERRORS, key=lambda r: -cell(r[0]).value(root))
    return [{"cell": cell(run), "name": name, "chance": chance(cell(run))} for run, name in ranked]


def real_error_checks_links(root: Path) -> list[tuple[str, str]]:
    """A finding's links to the tables :func:`real_error_checks` quotes, one a run."""
    return [(f"checks on {r['name']}", md(r["cell"].table)) for r in real_error_checks(root)]


def judge_study_documents(root: Path) -> Facts:
    pairs = f"{MAIN}/paired_document_judge-doc_sec_r-s-o_fields_original_.csv"
    return Facts(
        {
            "forced": det(MAIN, "document", FORCED),
            "free": det(MAIN, "document", FREE),
            "gain": paired(pairs, FREE, FORCED),
        },
        [("detection", f"{MAIN}/detection.md"), ("paired", md(pairs))],
        True,
    )


def judge_study_fields(root: Path) -> Facts:
    by_kind = f"{MAIN}/detection_by_output_kind.csv"
    kind_pairs = f"{MAIN}/paired_field_judge-field_by_output_kind.csv"

    def kind(scorer: str, fields: str) -> Cell:
        return Cell(by_kind, {"scorer": scorer, "granularity": "top", "fields": fields}, "auroc")

    def kpair(a: str, fields: str) -> Cell:
        return Cell(kind_pairs, {"fields": fields, "a": a, "b": "judge-field"}, "difference")

    return Facts(
        {
            "pooled": det(MAIN, "field", "judge-field"),
            "rating_filled": kind("judge-field", "value"),
            "p_correct_empty": kind("p-correct@top", "null or empty"),
            "p_correct_empty_gain": kpair("p-correct@top", "null or empty"),
            "p_correct_pooled": det(MAIN, "field", "p-correct@top"),
            "checks_pooled": det(MAIN, "field", "plausibility@top"),
            "checks_filled": kind("plausibility@top", "value"),
            "checks_filled_gain": kpair("plausibility@top", "value"),
            "expected_filled": kind("judge-field:expected", "value"),
            "p_correct_filled": kind("p-correct@top", "value"),
            "real_checks": real_error_checks(root),
        },
        [("by output kind", md(by_kind)), ("paired within kinds", md(kind_pairs))],
        True,
    )


def generated_errors(root: Path) -> Facts:
    pairs = f"{GEN}/paired_field_judge-field_by_output_kind.csv"
    best_pairs = f"{GEN}/paired_field_judge-field_expected_by_output_kind.csv"  # against the judge's best field score
    return Facts(
        {
            "rating": det(GEN, "field", "judge-field"),
            "logprobs": det(GEN, "field", "token_logprob@leaf"),
            "vs_rating": Cell(pairs, {"fields": "value", "a": "token_logprob@leaf", "b": "judge-field"}, "difference"),
            "vs_expected": Cell(
                best_pairs, {"fields": "value", "a": "token_logprob@leaf", "b": "judge-field:expected"}, "difference"
            ),
            "checks": Cell(
                f"{GEN}/detection_by_output_kind.csv", {"scorer": "plausibility@leaf", "fields": "value"}, "auroc"
            ),
        },
        [
            ("detection", f"{GEN}/detection.md"),
            ("by output kind", f"{GEN}/detection_by_output_kind.md"),
            ("paired within kinds", md(pairs)),
            ("against the expected rating", md(best_pairs)),
        ],
        True,
    )


WITHIN_FIELDS = f"{TABLES}/within_field.csv"
"""Each field's AUROC within its filled values (``evaluate``: :mod:`~construct_eval.reports.within_kind`)."""


def table_errors(root: Path) -> Facts:
    """The fourth dataset's offline rebuild: a generator's real errors on computed values, and
    the judge per top-level field on them, pooled and field by field (``table_fields.py``: a
    pooled or within-filled-fields AUROC mixes fields the judge rates with one value)."""
    by_kind = f"{TABLES}/detection_by_output_kind.csv"
    pairs = f"{TABLES}/paired_field_judge-field_by_output_kind.csv"
    per_field = f"{RUNS}/table_fields.csv"

    def tf(field: str, scorer: str, column: str = "auroc") -> Cell:
        return Cell(per_field, {"field": field, "scorer": scorer}, column)

    def within(field: str) -> Cell:
        return Cell(WITHIN_FIELDS, {"scorer": "judge-field:expected", "field": field}, "auroc")

    above = [
        r["field"]
        for r in read_rows(root / WITHIN_FIELDS)
        if r["scorer"] == "judge-field:expected" and r["powered"] == "True" and float(r["auroc_low"]) > 0.5
    ]
    if above != ["identifier_first"]:
        raise RewriteFinding(
            f"{WITHIN_FIELDS}: the judge is above chance within filled values on {above}; rewrite the finding"
        )
    fields = ("identifier_first", "identifier_last", "identifier_shortest", "num_columns", "column_types")
    return Facts(
        {
            "doc": det(TABLES, "document", "token_logprob"),
            "leaf": det(TABLES, "field", "token_logprob@leaf"),
            "judge": det(TABLES, "field", "judge-field"),
            "logprobs": det(TABLES, "field", "token_logprob@top"),
            "checks": det(TABLES, "field", "plausibility@top"),
            "prior": det(TABLES, "field", "field-prior-uses-labels@top"),
            # the judge's spread on the three fields one sentence says it rates with one value
            "spreads": [tf(key, "judge-field", "spread") for key in ("num_rows", "num_columns", "column_types")],
            "judge_by_field": {key: tf(key, "judge-field") for key in (*fields, "column_max", "column_min")},
            "logprobs_by_field": {
                key: tf(key, "token_logprob@top") for key in ("num_columns", "identifier_last", "identifier_shortest")
            },
            "within": {key: within(key) for key in fields},
            "empty": Cell(by_kind, {"scorer": "judge-field", "granularity": "top", "fields": "null or empty"}, "auroc"),
            "filled": Cell(by_kind, {"scorer": "judge-field", "granularity": "top", "fields": "value"}, "auroc"),
            "logprobs_gain": Cell(
                pairs, {"fields": "value", "a": "token_logprob@top", "b": "judge-field"}, "difference"
            ),
            "leaf_filled": Cell(
                by_kind, {"scorer": "token_logprob@leaf", "granularity": "leaf", "fields": "value"}, "auroc"
            ),
            "checks_gain": Cell(pairs, {"fields": "value", "a": "plausibility@top", "b": "judge-field"}, "difference"),
            "checks_filled": Cell(
                by_kind, {"scorer": "plausibility@top", "granularity": "top", "fields": "value"}, "auroc"
            ),
        },
        [
            ("detection", f"{TABLES}/detection.md"),
            ("field by field", md(per_field)),
            ("paired within kinds", md(pairs)),
        ],
        False,
    )


def synthetic_expected(root: Path) -> Facts:
    pairs = f"{SYN}/paired_document_judge-doc.csv"
    return Facts(
        {
            "rating": det(SYN, "document", "judge-doc"),
            "expected": det(SYN, "document", "judge-doc:expected"),
            "gain": paired(pairs, "judge-doc:expected", "judge-doc"),
        },
        [("detection", f"{SYN}/detection.md"), ("paired", md(pairs))],
        False,
    )


def planted_kinds(root: Path) -> Facts:
    within_main = f"{MAIN}/detection_by_planted_kind_within_output_kind.csv"
    within = f"{NEAR}/detection_by_planted_kind_within_output_kind.csv"
    near_pairs = f"{NEAR}/paired_document_judge-doc.csv"

    def kinds(table: str, scorer: str, *names: str) -> dict[str, Cell]:
        return {kind: Cell(table, {"scorer": scorer, "fields": "value", "kind": kind}, "auroc") for kind in names}

    return Facts(
        {
            "main": kinds(within_main, "judge-field", "invented_value"),
            "rating": kinds(within, "judge-field", "span_cut", "neighbour_type", "digit_slip"),
            "p_correct": kinds(within, "p-correct@top", "neighbour_type", "digit_slip"),
            "expected": kinds(within, "judge-field:expected", "digit_slip"),
            "checks": kinds(within, "plausibility@top", "neighbour_type", "digit_slip"),
            "pooled": Cell(
                f"{MAIN}/detection_by_planted_kind.csv", {"scorer": "judge-field", "kind": "invented_value"}, "auroc"
            ),
            "doc": det(NEAR, "document", "judge-doc"),
            "free": det(NEAR, "document", FREE),
            "free_gain": paired(near_pairs, FREE, "judge-doc"),
            "p_correct_doc": det(NEAR, "document", "p-correct"),
            "checks_doc": det(NEAR, "document", "plausibility"),
            "real_checks": real_error_checks(root),
        },
        [
            ("per kind, near misses", md(within)),
            ("per kind, main study", md(within_main)),
            ("per sentence, paired", md(near_pairs)),
            *real_error_checks_links(root),
        ],
        False,
    )


def order_bias(root: Path) -> Facts:
    written = f"{MAIN}/bias_pairs_doc.csv"
    expected = f"{MAIN}/bias_pairs_doc_expected_rating.csv"
    base = "sec:r-s-o|fields:original"

    def shift(table: str, variant: str) -> Cell:
        return Cell(table, {"variant_a": base, "variant_b": variant}, "mean_shift")

    out_first, reversed_ = "sec:o-s-r|fields:original", "sec:r-s-o|fields:reversed"
    shifts = {
        "written": {"out_first": shift(written, out_first), "reversed": shift(written, reversed_)},
        "expected": {"out_first": shift(expected, out_first), "reversed": shift(expected, reversed_)},
    }
    for table in shifts.values():  # "none measurably changes": every AUROC difference's interval holds 0
        for variant, cell in table.items():
            if not (
                cell.with_column("auroc_diff_low").value(root) <= 0 <= cell.with_column("auroc_diff_high").value(root)
            ):
                raise RewriteFinding(
                    f"{cell.table}: the AUROC difference of {variant} now excludes 0; rewrite the finding"
                )
    return Facts(
        {**shifts, "forced": det(MAIN, "document", FORCED)},  # the default order's forced rating: how it uses the scale
        [("judge rating", md(written)), ("expected rating", md(expected))],
        True,
    )


def rating_meaning(root: Path) -> Facts:
    """What each value of the forced field rating means as an error rate, and what the calibration
    maps make of it out of fold. The package's isotonic map is fitted decreasing only (a higher
    score can never mean more errors: ``IsotonicCalibrator``), Platt scaling in either direction; on
    the expected rating, where histogram binning (no order kept) has a lower out-of-fold Brier than
    both in the calibration table, the finding says so; and the reading per value (each value's
    share wrong out of fold), beside the base rate with its paired interval."""
    values = f"{MAIN}/values_field_judge-field.csv"
    readings = f"{MAIN}/rating_readings.csv"
    calibration = f"{MAIN}/calibration.csv"
    kinds = f"{MAIN}/detection_by_output_kind.csv"
    filled_values = f"{MAIN}/values_by_output_kind.csv"

    def r(reading: str) -> Cell:
        return Cell(readings, {"level": "field", "scorer": "judge-field", "reading": reading}, "brier")

    def cal(method: str) -> Cell:
        return Cell(calibration, {"level": "field", "scorer": "judge-field:expected", "method": method}, "brier")

    def filled(value: str) -> Cell:
        return Cell(filled_values, {"scorer": "judge-field", "fields": "value", "value": value}, "error_rate")

    def kind(fields: str) -> Cell:
        return Cell(kinds, {"scorer": "judge-field", "granularity": "top", "fields": fields}, "n")

    def base_fmt(reading: str) -> str:
        """Four decimals where three would round an interval that excludes 0 onto it."""
        lo, hi = (r(reading).with_column(c).value(root) for c in ("base_diff_low", "base_diff_high"))
        return "+4f" if (hi < 0 or lo > 0) and min(abs(lo), abs(hi)) < 0.0005 else "+3f"

    def beats_base(reading: str) -> bool:
        return r(reading).with_column("base_diff_high").value(root) < 0

    value = {x: Cell(values, {"value": x}, "error_rate") for x in ("1.0", "5.0", "10.0")}
    rates = [c.value(root) for c in value.values()]
    if not rates[1] > max(rates[0], rates[2]):
        raise RewriteFinding(
            f"{values}: the error rate no longer rises from 1 to 5 and falls to 10; rewrite the finding"
        )
    levels = ("1.0", "5.0", "10.0")
    filled_rates = [filled(x).value(root) for x in levels]
    if filled_rates != sorted(filled_rates, reverse=True):
        raise RewriteFinding(
            f"{filled_values}: within filled fields the rating is no longer in order; rewrite the finding"
        )
    readings_used = (
        "naive",
        "isotonic (out of fold)",
        "platt (out of fold)",
        "base rate (out of fold)",
        "per value (out of fold)",
    )
    monotone = [m for m in ("isotonic (out of fold)", "platt (out of fold)") if beats_base(m)]
    return Facts(
        {
            "value": {str(int(float(x))): c for x, c in value.items()},
            "filled": {str(int(float(x))): filled(x) for x in levels},
            "empty": kind("null or empty"),
            "filled_kind": kind("value"),
            "reading": {name: r(name) for name in readings_used},
            "base_fmt": {
                name: base_fmt(name) for name in readings_used if "(out of fold)" in name and "base rate" not in name
            },
            "calibration": {m: cal(m) for m in ("histogram", "isotonic", "platt")},
            "binning_wins": cal("histogram").value(root) < min(cal("isotonic").value(root), cal("platt").value(root)),
            "by_value": beats_base("per value (out of fold)"),
            "monotone_beats_base": bool(monotone),
            # a monotone map's gain under half a hundredth of Brier: "barely"
            "monotone_barely": max(
                (-r(m).with_column("brier_minus_base_rate").value(root) for m in monotone), default=0.0
            )
            < 0.005,
        },
        [
            ("what each value means", md(values)),
            ("readings", md(readings)),
            ("calibration", md(calibration)),
            ("by output kind", md(kinds)),
        ],
        True,
    )


def self_consistency(root: Path) -> Facts:
    run = f"{RUNS}/insurance_claims/metrics"
    pairs = f"{run}/paired_field_token_logprob_leaf.csv"
    combo = "combo:rank-mean[consistency@leaf+token_logprob@leaf]@leaf"
    return Facts(
        {
            "consistency": det(run, "field", "consistency@leaf"),
            "logprobs": det(run, "field", "token_logprob@leaf"),
            "combo": det(run, "field", combo),
            "combo_gain": paired(pairs, combo, "token_logprob@leaf"),
            "prior": det(run, "field", "field-prior-uses-labels@leaf"),
        },
        [("detection", f"{run}/detection.md"), ("paired", md(pairs))],
        False,
    )


def labelling_convention(root: Path) -> Facts:
    run = f"{RUNS}/pii-sample50/metrics"
    strict = det(run, "field", "token_logprob@leaf")
    other = Cell(f"{run}/detection_other_reading.csv", strict.where, "auroc")
    return Facts(
        {
            "strict": strict,
            "other": other,
            "moves_above_chance": _holds_chance(root, strict) and other.with_column("auroc_low").value(root) > 0.5,
        },
        [("strict", f"{run}/detection.md"), ("null-like as null", f"{run}/detection_other_reading.md")],
        False,
    )


def reflection_small(root: Path) -> Facts:
    """The reflection ensemble: measured on the natural notices (a size that can rank it), and on
    the two small planted sets where it was first tried."""
    synthetic = f"{RUNS}/synthetic40-controlled20/metrics"
    return Facts(
        {
            "notices": det(NATURAL, "document", "reflection"),
            "fields": det(NATURAL, "field", "reflection@top"),
            "claims": det(CLAIMS, "document", "reflection"),
            "synthetic": det(synthetic, "document", "reflection"),
        },
        [
            ("natural notices", f"{NATURAL}/detection.md"),
            ("claims", f"{CLAIMS}/detection.md"),
            ("synthetic", f"{synthetic}/detection.md"),
        ],
        False,
    )


def positive_control(root: Path) -> Facts:
    """The positive control: CONSTRUCT's own code with a scripted judge of known competence on the
    natural notices, and where the 1.5B judge's CONSTRUCT sits on that curve."""
    table = f"{NATURAL}/construct_competence.csv"
    parts = f"{NATURAL}/construct_parts.csv"

    def scripted(level: str, *competences: str) -> dict[str, Cell]:
        return {
            q: Cell(table, {"judge": f"scripted, competence {q}", "score": "CONSTRUCT", "level": level}, "auroc")
            for q in competences
        }

    def part(template: str, level: str = "field") -> Cell:
        return Cell(parts, {"template": template, "level": level}, "auroc")

    field_templates = ("field-accuracy", "knowledge-gap", "per-field-correctness", "per-field-certainty")
    above = [t for t in field_templates if part(t).with_column("auroc_low").value(root) > 0.5]
    if above != ["field-accuracy"]:  # the sentence names the one template above chance
        raise RewriteFinding(f"{parts}: the templates above chance per field are now {above}; rewrite the finding")
    return Facts(
        {
            "scripted": {
                "field": scripted("field", "0.5", "0.7", "0.9", "1.0"),
                "document": scripted("document", "0.5", "0.9", "1.0"),
            },
            "model": {
                level: Cell(table, {"judge": "qwen2.5-coder-1.5b", "score": "CONSTRUCT", "level": level}, "auroc")
                for level in ("field", "document")
            },
            "part": {t.replace("-", "_"): part(t) for t in field_templates},
            "argument": part("argument", "document"),
        },
        [("competence curve", md(table)), ("CONSTRUCT's parts", md(parts))],
        True,
    )


def natural_comparison(root: Path) -> Facts:
    """The paper's comparison on errors a generator really made (the natural-error study): CONSTRUCT
    as its authors' TLM 0.0.3 computes it against the judge per notice, the judge per field (the
    paper's way, and forced) and the generator's token log-probs, on the notices every method scored."""
    table = f"{NATURAL}/paper_comparison.csv"

    def pc(level: str, *keys: str) -> dict[str, Cell]:
        return {key.replace("-", "_"): Cell(table, {"level": level, "key": key}, "auroc") for key in keys}

    per_field = pc("field", "construct", "token-logprob", "judge-field", "judge-field-forced", "rank-combination")
    per_notice = pc("document", "construct", "token-logprob", "construct-gen", "judge-doc")
    doc = per_notice["construct"]
    # the notices CONSTRUCT was asked on: those it scored and those whose replies TLM's code cannot read
    judged = doc.with_column("scored").value(root) + doc.with_column("unscored").value(root)
    return Facts(
        {
            "field": per_field,
            "document": per_notice,
            # the generator's own score (every notice of the run); the reflection prompts' (the notices they judged)
            "every": det(NATURAL, "document", "token_logprob"),
            "judged_docs": det(NATURAL, "document", "reflection"),
            "rule": det(NATURAL, "document", "contact_rule"),
            "counts": {
                "wrong_fields": count("natural: wrong fields"),
                "contact": count("natural: destination contact"),
                "greeting": count("natural: contact named only by Attn or Dear"),
                "grams": count("natural: weights in grams"),
            },
            "planned": NATURAL_PLANNED,
            "interim": judged < NATURAL_PLANNED,
            "any_unscored": bool(doc.with_column("unscored").value(root)),
        },
        [("paper comparison", md(table)), ("detection", f"{NATURAL}/detection.md"), ("counts", COUNTS)],
        judged >= NATURAL_PLANNED,
    )


SETTINGS = f"{RUNS}/construct_settings.csv"
"""CONSTRUCT against the generator's token log-probs, one row per setting and level
(``construct_settings_report``)."""


def construct_settings(root: Path) -> Facts:
    """The paper's question setting by setting (dataset, generator, judge and its size): each
    setting's state, and per field and per notice CONSTRUCT's AUROC beside the log-probs', ranked
    only where the table says that level's row is powered (a setting is counted ranked where one of its
    levels is)."""
    rows = read_rows(root / SETTINGS)
    settings: dict[str, dict[str, Any]] = {}
    for row in rows:
        unit = "sentence" if "sentence" in row["dataset"] else "notice"  # what a document of the setting is
        setting = settings.setdefault(row["run"], {"levels": {}, "unit": unit})
        where = {"run": row["run"], "level": row["level"]}
        setting["cell"] = Cell(SETTINGS, where, "construct_auroc")  # the last row's: its labels and state
        if row["level"]:
            setting["levels"][row["level"]] = Cell(SETTINGS, where, "construct_auroc")
            setting.setdefault("powered", {})[row["level"]] = not row["underpowered"] and bool(row["n"])
            if not row["underpowered"] and row["ranking"].endswith(("lower", "higher")):
                setting.setdefault("directions", set()).add(row["ranking"].rsplit(" ", 1)[1])
        setting["interim"] = row["state"].startswith("under way")
    ranked = [s for s in settings.values() if s.get("directions")]
    directions = {d for s in ranked for d in s["directions"]}
    return Facts(
        {
            "settings": list(settings.values()),
            "ranked": len(ranked),
            "ranked_complete": sum(1 for s in ranked if not s["interim"]),
            "ranked_interim": sum(1 for s in ranked if s["interim"]),
            "begun": sum(1 for s in settings.values() if s["levels"]),
            "planned": len(settings),
            "always_below": directions == {"lower"},
        },
        [("settings", md(SETTINGS)), ("competence curve", f"{NATURAL}/construct_competence.md")],
        False,
    )


def decisions(root: Path) -> Facts:
    """Learn-then-Test thresholds on the main run, and whether their promise holds: two checks side
    by side, the one the guarantee is about (the run taken as the population) and a test half's
    realised share (a finite sample, so a noisy check); what the checks' threshold lets through (most
    of it empty outputs, which they pass by construction); and the checks on errors not planted."""
    thresholds = f"{MAIN}/decision_thresholds.csv"
    validity = f"{MAIN}/decision_validity.csv"
    plaus = "plausibility@leaf"

    def t(scorer: str, column: str) -> Cell:
        return Cell(thresholds, {"level": "field", "scorer": scorer, "alpha": "0.05"}, column)

    doc_validity = Cell(validity, {"level": "document", "scorer": "plausibility", "alpha": "0.1"}, "violation_rate")
    return Facts(
        {
            "p_correct": t("p-correct@top", "documents_needed"),
            "checks": t(plaus, "coverage"),
            "error_rate": Cell(f"{MAIN}/decision_aurc.csv", {"level": "field", "scorer": plaus}, "error_rate"),
            "field_validity": Cell(validity, {"level": "field", "scorer": plaus, "alpha": "0.05"}, "splits"),
            "doc_validity": doc_validity,
            "half_over": doc_validity.value(root) > 0.1,
            "accepted": count("checks accept"),
            "empty": count("checks accept: empty outputs"),
            "filled_wrong": count("checks accept: filled fields wrong"),
            "real_checks": real_error_checks(root),
        },
        [
            ("thresholds", md(thresholds)),
            ("validity", md(validity)),
            ("counts", COUNTS),
            *real_error_checks_links(root),
        ],
        True,
        readme_links=3,  # the short quotes no check on a generator's errors
    )


FINDINGS: list[Callable[[Path], Facts]] = [
    natural_comparison,
    construct_settings,
    positive_control,
    judge_study_documents,
    judge_study_fields,
    generated_errors,
    table_errors,
    synthetic_expected,
    planted_kinds,
    order_bias,
    rating_meaning,
    decisions,
    self_consistency,
    labelling_convention,
    reflection_small,
]
"""The findings in the order FINDINGS.md gives them; each function's name is its template's."""
