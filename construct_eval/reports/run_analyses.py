"""A run folder's analyses end to end: tables under ``metrics/``, figures under ``figures/``
(``evaluate``, ``calibrate``, ``bias``), and the overview of its judges (``compare``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from construct_eval.blas import one_blas_thread
from construct_eval.data.labels import (
    judged_field_errors,
)
from construct_eval.data.runs import RunDir, RunError
from construct_eval.fields import DOCUMENT, parse_path
from construct_eval.judging.prompts import PromptVariant
from construct_eval.judging.reread import judgment_rows
from construct_eval.reports.collect import (
    ALT_LABELS,
    _judge_items,
    collect,
    elicitations,
    latest_per_item,
    load_labels,
    not_generated,
    not_judgeable,
)
from construct_eval.reports.judgment_counts import parse_rule_rows
from construct_eval.reports.output_kinds import output_kind_table
from construct_eval.reports.run_memo import READS, memo_arrays_by_run_files
from construct_eval.reports.tables import (
    MIN_DISTINCT_TO_FIT,
    base_rate_table,
    calibration_table,
    detection_columns,
    detection_table,
    file_slug,
    is_rating,
    rating_use,
    write_table,
)
from construct_eval.stats.calibration import (
    METHODS,
    Calibrator,
    naive_rating_reading,
    value_table,
)
from construct_eval.stats.count_metrics import distinct_scores
from construct_eval.stats.rating_readings import rating_maps, rating_readings

if TYPE_CHECKING:
    from construct_eval.reports.report_objects import BiasReport, CalibrationReport, EvaluationReport


@one_blas_thread()  # the tables' many small products: a BLAS pool's spin costs more than they do
def evaluate_run(
    run: RunDir,
    out_dir: Path | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    figures: str = "all",
    intervals: str = "auto",
) -> EvaluationReport:
    """Detection tables and figures for every scorer of ``run``: its report (tables, ``plot``, ``save``).
    ``figures``: which figures to draw (:data:`~construct_eval.reports.report_objects.FIGURE_SETS`:
    ``none``, ``main`` or ``all``); the tables are the same whichever. ``intervals``: the detection
    table's AUROC intervals (:func:`construct_eval.stats.delong.choose`: ``auto`` takes the clustered
    DeLong estimator for a table of 100,000 items or more, the document bootstrap below)."""
    from construct_eval.reports.report_objects import check_figure_set

    check_figure_set(figures)

    out_dir = out_dir or run.path
    items = collect(run)
    unparsed = not_judgeable(run)
    title = f"Error detection ({run.path.name}); {unparsed} unparsed outputs are wrong documents no scorer saw"
    missing = not_generated(run)
    if missing:
        why = ", ".join(f"{k} {v}" for k, v in missing.items())
        title += f"; {sum(missing.values())} documents not generated ({why}) are left out"
    coverage = verdict_coverage(run)
    if coverage:
        write_table(
            coverage,
            out_dir / "metrics" / "verdict_mass",
            f"P(correct) verdicts ({run.path.name}): how much of the answer token's distribution 'yes' and 'no' covered",
        )
    rules = parse_rule_rows(run)
    if rules:
        write_table(
            rules,
            out_dir / "metrics" / "parse_rules",
            f"Which rule read each rating ({run.path.name}): the last `Rating: [[x]]`, else the recipe's"
            " first `[[x]]`, else its first `[x]`; stored replies read again, no call made",
        )
    from construct_eval.reports.report_objects import EvaluationReport

    report = EvaluationReport(
        run=run.path.name, rows=[], items=items, unparsed=unparsed, not_generated=dict(missing),
        titles={"detection": title}, out_dir=out_dir,
    )  # fmt: skip
    drawn = report.save_figures(out_dir, figures)
    # The tables that walk document resamples, in this process: run in two forked workers beside
    # the figures they hung in a fresh checkout (numba compiling its walks in a forked child) and
    # once wrote tables unlike one process's (results/benchmarks/analysis_scale.txt).
    report.rows, report.other_reading = _detection_tables(
        run, items, out_dir, title, n_boot=n_boot, seed=seed, intervals=intervals
    )
    planted_figures = _planted_kind_tables(
        run, items, out_dir, n_boot=n_boot, seed=seed, draw=figures == "all", intervals=intervals
    )
    report.figures = [*planted_figures, *drawn]
    return report


def _detection_tables(
    run: RunDir, items: Sequence[Any], out_dir: Path, title: str, *, n_boot: int, seed: int, intervals: str = "auto"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """``metrics/detection`` (and its other reading), ``detection_by_output_kind`` and the review
    tables per rating threshold; the detection rows and the other reading's."""
    from construct_eval.stats import metrics

    rows = detection_table(items, n_boot=n_boot, seed=seed, intervals=intervals)
    write_table(rows, out_dir / "metrics" / "detection", title, md_columns=detection_columns(rows))
    _document_classes(run, items, out_dir)
    other = None
    if run.file(ALT_LABELS).exists():  # null-like strings change labels here: the other reading too
        alt_rules = (run.meta().get(ALT_LABELS) or {}).get("rules") or {}
        other = detection_table(collect(run, ALT_LABELS), n_boot=n_boot, seed=seed, intervals=intervals)
        alt_title = (
            f"Error detection ({run.path.name}), with the null-like strings"
            f" {alt_rules.get('null_like_strings')} read as null (labels_other_reading.jsonl)"
        )
        write_table(
            other, out_dir / "metrics" / "detection_other_reading", alt_title, md_columns=detection_columns(other)
        )
    by_kind = _output_kind_rows(run, items, n_boot=n_boot, seed=seed, intervals=intervals)
    if by_kind:
        write_table(
            by_kind,
            out_dir / "metrics" / "detection_by_output_kind",
            f"Field-level detection within output kinds ({run.path.name}): fields left null or empty, fields with a value"
            + _delong_words(by_kind),
        )
        _within_kind_tables(run, items, out_dir, n_boot=n_boot, seed=seed)
    for it in items:  # review tables per rating threshold, for scores with few distinct values
        y, s, _ = it.columns()
        if it.n and 0 < y.sum() < len(y) and len(distinct_scores(s)[0]) <= 20:
            write_table(
                metrics.threshold_table(y, s),
                out_dir / "metrics" / f"thresholds_{it.level.value}_{file_slug(it.scorer.name)}",
                f"Review every item scored <= threshold ({it.level.value}, {it.scorer.name})",
            )
    return rows, other


def verdict_coverage(run: RunDir) -> list[dict[str, Any]]:
    """Per level, the verdict calls and the probability mass their yes/no tokens covered: a
    P(correct) read from a small mass was not really a yes/no answer. Empty without verdicts."""
    if not run.file("verdicts").exists():
        return []
    rows: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in latest_per_item(run.iter_rows("verdicts"), lambda r: (r["id"], r["field"]), "verdicts")[0]:
        rows["document" if r["field"] == DOCUMENT else "field"].append(r)
    out = []
    for level in ("document", "field"):
        if not rows[level]:
            continue
        ok = [float(r["mass"]) for r in rows[level] if r.get("status") == "ok"]
        out.append(
            {
                "level": level,
                "calls": len(rows[level]),
                "scored": len(ok),
                "unscored": len(rows[level]) - len(ok),
                "mass_mean": round(float(np.mean(ok)), 4) if ok else float("nan"),
                "mass_median": round(float(np.median(ok)), 4) if ok else float("nan"),
                "mass_min": round(min(ok), 4) if ok else float("nan"),
                "share_mass_below_0.5": round(sum(m < 0.5 for m in ok) / len(ok), 4) if ok else float("nan"),
            }
        )
    return out


def _planted_kind_tables(
    run: RunDir,
    items: Sequence[Any],
    out_dir: Path,
    *,
    n_boot: int,
    seed: int,
    draw: bool = True,
    intervals: str = "auto",
) -> list[Path]:
    """``metrics/detection_by_planted_kind`` and (``draw``) its figures, for a run with planted errors."""
    from construct_eval.display import plots
    from construct_eval.reports.by_kind import kind_table, planted_errors, planted_kind_figure

    planted = planted_errors(run)
    rows = kind_table(items, planted, n_boot=n_boot, seed=seed, intervals=intervals) if planted else []
    if not rows:
        return []
    write_table(
        rows,
        out_dir / "metrics" / "detection_by_planted_kind",
        f"Field-level detection per planted error kind ({run.path.name}): each kind's wrong fields against every"
        " correct field (AUROC, document bootstrap), and the share of them found reviewing the lowest-scored 10%"
        + _delong_words(rows),
    )
    within = _planted_within_output_kind(run, items, planted, n_boot=n_boot, seed=seed, intervals=intervals)
    if within:
        write_table(
            within,
            out_dir / "metrics" / "detection_by_planted_kind_within_output_kind",
            f"Field-level detection per planted error kind within output kinds ({run.path.name}): each kind's wrong"
            " fields with a value (or left null or empty) against the correct fields with a value (or left null or"
            " empty), so a score that only tells filled fields from empty ones gains nothing (AUROC, document bootstrap)"
            + _delong_words(within),
        )
    if not draw:
        return []
    return [
        plots.save(
            planted_kind_figure(rows, _planted_title(run.path.name, gran), granularity=gran),
            out_dir / "figures" / f"detection_by_planted_kind_{gran}.png",
        )
        for gran in sorted({r["granularity"] for r in rows})
    ]


def _planted_title(run_name: str, granularity: str) -> str:
    from construct_eval.display.style import dataset_label

    name, how = dataset_label(run_name)
    unit = "leaves" if granularity == "leaf" else "top-level fields"
    return f"{name}, {how}: each planted kind's wrong {unit} against every correct one"


def _planted_within_output_kind(
    run: RunDir, items: Sequence[Any], planted: Mapping[str, Any], *, n_boot: int, seed: int, intervals: str = "auto"
) -> list[dict[str, Any]]:
    """:func:`~construct_eval.reports.by_kind.kind_table` within each output kind (``fields``:
    ``value``, ``null or empty``): a kind's wrong fields are ranked against the correct fields of
    their own output kind. Pooled over kinds, an invented value (a filled field where the truth is
    null) is ranked against the many empty fields a judge rates low for being empty, and a score
    that only tells filled from empty looks like it finds or misses it. Empty if the outputs cannot
    be rebuilt."""
    from construct_eval.reports.by_kind import kind_table
    from construct_eval.reports.output_kinds import KINDS

    fields = [it for it in items if it.level == "field" and it.n and it.granularity in ("leaf", "top")]
    if not fields or not with_output_kinds(run, items):
        return []
    rows: list[dict[str, Any]] = []
    for kind in reversed(KINDS):  # the filled fields first, as the figures read them
        subsets = [it.of_kind(kind) for it in fields]
        rows += [
            {**r, "fields": kind} for r in kind_table(subsets, planted, n_boot=n_boot, seed=seed, intervals=intervals)
        ]
    return rows


def _output_kind_rows(
    run: RunDir, items: Sequence[Any], *, n_boot: int, seed: int, intervals: str = "auto"
) -> list[dict[str, Any]]:
    """The field-level detection table split by output kind, or nothing when the run has no
    field-level scores or its outputs cannot be rebuilt (records missing for a controlled run)."""
    if not any(it.level == "field" and it.n for it in items) or not with_output_kinds(run, items):
        return []
    return output_kind_table(items, n_boot=n_boot, seed=seed, intervals=intervals)


def _delong_words(rows: Sequence[Mapping[str, Any]]) -> str:
    """What a table's title adds where some of its rows took the clustered DeLong interval."""
    if not any(r.get("intervals") == "delong" for r in rows):
        return ""
    return "; rows marked delong: the clustered DeLong interval (no resamples)"


def _document_classes(run: RunDir, items: Sequence[Any], out_dir: Path) -> None:
    """``document_classes`` (:mod:`~construct_eval.reports.document_classes`): how many documents
    hold a wrong and a right item of each score, over all its items and within each output kind."""
    from construct_eval.reports.document_classes import document_classes_table

    if any(it.level == "field" and it.n for it in items):
        with_output_kinds(run, items)  # the rows per kind where the outputs can be read
    rows = document_classes_table(items)
    if rows:
        write_table(rows, out_dir / "metrics" / "document_classes",
                    f"Documents with a wrong and with a right item, per score ({run.path.name}): the power rule's"
                    " document counts, over all items and within each output kind")  # fmt: skip


def _within_kind_tables(run: RunDir, items: Sequence[Any], out_dir: Path, *, n_boot: int, seed: int) -> None:
    """``within_field`` and ``values_by_output_kind`` (:mod:`~construct_eval.reports.within_kind`):
    the judge's field scores within each field's filled values, and what each value of a written
    field rating means within each output kind; nothing where the run has no such score."""
    from construct_eval.reports.within_kind import values_by_output_kind_table, within_field_table

    if not with_output_kinds(run, items):
        return
    name = run.path.name
    within = within_field_table(items, n_boot=n_boot, seed=seed)
    if within:
        write_table(within, out_dir / "metrics" / "within_field",
                    f"The judge's field scores within each field's filled values ({name}): AUROC among the values"
                    " of one field, document-bootstrap intervals")  # fmt: skip
    values = values_by_output_kind_table(items, seed=seed)
    if values:
        write_table(values, out_dir / "metrics" / "values_by_output_kind",
                    f"What each value of a written field rating means within each output kind ({name}):"
                    " error rate, naive reading, isotonic and Platt fitted out of fold within the kind")  # fmt: skip


@memo_arrays_by_run_files("labels", *READS, "outputs", "records")
def item_output_kinds(run: RunDir, items: Sequence[Any]) -> dict[str, np.ndarray] | None:
    """The output kind of every field-level item of ``collect(run)`` (``items``), per item set's
    key, in item order (``""`` where the document has no output), or None when the outputs cannot
    be rebuilt here (records missing for a controlled run). Each (document, field) read once;
    kept beside the run: rebuilding a controlled run's outputs reads every record."""
    from construct_eval.reports.output_kinds import kinds_of

    fields = [it for it in items if it.level == "field" and it.n]
    outputs = _rebuilt_outputs(run) if fields else None
    if outputs is None:
        return None
    known: dict[tuple[str, str], str | None] = {}
    return {it.key: np.array([k or "" for k in kinds_of(it, outputs, known)]) for it in fields}


def with_output_kinds(run: RunDir, items: Sequence[Any]) -> bool:
    """Give each field-level item set of ``collect(run)`` (``items``) its items' output kinds
    (:attr:`~construct_eval.reports.collect.ScoredItems.kinds`, from :func:`item_output_kinds`, read
    once per run and kept beside it); False, and none given, where the outputs cannot be rebuilt."""
    kinds = item_output_kinds(run, items)
    if kinds is None:
        return False
    for it in items:
        if it.key in kinds and it.level == "field":
            it.kinds = kinds[it.key]
    return True


def _rebuilt_outputs(run: RunDir) -> dict[str, Any] | None:
    """Each document's output (a controlled run's rebuilt from its records), or None when the
    outputs cannot be rebuilt here (records missing): the tables per output kind need them."""
    try:
        return {r["id"]: r["output"] for r in run.outputs() if "output" in r}
    except RunError:
        return None


def base_rate_run(run: RunDir, *, seed: int = 0) -> list[dict[str, Any]]:
    """Per scorer and level of ``run``, the Brier score of always predicting the share wrong,
    out of fold on the folds :func:`calibrate_run` fits its maps on (:func:`base_rate_table`):
    the fair line a calibrated score's Brier has to beat. Writes nothing."""
    return base_rate_table(collect(run), seed=seed)


@one_blas_thread()
def calibrate_run(
    run: RunDir,
    out_dir: Path | None = None,
    *,
    methods: Sequence[str | Calibrator] = METHODS,
    seed: int = 0,
    target_recall: float = 0.9,
    figures: str = "all",
) -> CalibrationReport:
    """Out-of-fold calibration tables and reliability diagrams for every scorer of ``run``: its
    report (tables, ``plot``, ``save``). ``figures``: which figures to draw (``none``, ``main``:
    the reliability diagrams, ``all``); the tables are the same whichever."""
    from construct_eval.reports.report_objects import CalibrationReport, check_figure_set
    from construct_eval.stats.calibration import reliability_table

    check_figure_set(figures)

    out_dir = out_dir or run.path
    items = collect(run)
    rows, predictions = calibration_table(items, methods=methods, seed=seed, target_recall=target_recall)
    write_table(rows, out_dir / "metrics" / "calibration", f"Calibration out of fold ({run.path.name})")
    by_key = {i.key: i for i in items}
    by_item: dict[str, dict[str, Any]] = defaultdict(dict)
    for (key, method), p in predictions.items():
        y, _, _ = by_key[key].columns()
        by_item[key][method] = reliability_table(p, y, bins=10, strategy="mass")
    bins_rows = [
        {"level": by_key[key].level.value, "scorer": by_key[key].scorer.name, "method": method, "bin": i, **vars(b)}
        for key, tables in by_item.items()
        for method, table in tables.items()
        for i, b in enumerate(table)
    ]
    if bins_rows:  # the reliability diagrams' numbers, for the paper figures' grid
        write_table(bins_rows, out_dir / "metrics" / "reliability", f"Reliability bins, out of fold ({run.path.name})")
    meanings, value_maps = {}, {}
    for it in items:
        rating = is_rating(it.scorer)
        if it.n and len(set(it.wrong)) < 2:  # every item wrong (or right): each value reads the same rate
            name = f"values_{file_slug(it.key)}"  # an earlier version wrote its table and figure: not kept
            for stale in (*(out_dir / "metrics").glob(f"{name}.*"), out_dir / "figures" / f"{name}.png"):
                stale.unlink(missing_ok=True)
            continue
        if not it.n or len(set(it.scores)) < 2 or not (rating or len(set(it.scores)) < MIN_DISTINCT_TO_FIT):
            continue
        y, s, g = it.columns()
        fitted = {m: predictions[(it.key, m)] for m in ("isotonic", "platt") if (it.key, m) in predictions}
        if not fitted and it.scorer.is_written_rating:  # few values: the readings rating_readings fits and scores
            maps = rating_maps(s, y, g, seed=seed)
            fitted = {m: np.array([maps[float(v)][m] for v in s]) for m in ("isotonic", "platt")} if maps else {}
        table = value_table(s, y, fitted=fitted, naive=naive_rating_reading if rating else None)
        meanings[it.key] = table
        name = f"values_{file_slug(it.key)}"
        write_table(table, out_dir / "metrics" / name, f"What each value of {it.scorer} means ({it.level}, n={it.n})")
        value_maps[it.key] = [*fitted, "naive"] if rating else list(fitted)
    readings = []
    for it in items:  # the written ratings: naive, isotonic and Platt readings side by side
        if it.n and it.scorer.is_written_rating:
            y, s, g = it.columns()
            row = {"level": it.level.value, "scorer": it.scorer.name}
            readings += [{**row, **r} for r in rating_readings(s, y, g, seed=seed)]
    if readings:
        write_table(
            readings,
            out_dir / "metrics" / "rating_readings",
            f"Three readings of each written rating as P(error) ({run.path.name}): Brier and per-value ECE,"
            " document-bootstrap intervals",
        )
    report = CalibrationReport(
        run=run.path.name, rows=rows, predictions=predictions, reliability=dict(by_item), values=meanings,
        value_maps=value_maps, readings=readings,
    )  # fmt: skip
    report.figures = report.save_figures(out_dir, figures)
    return report


def _positions(run: RunDir, rows: Sequence[Mapping[str, Any]]) -> list[float] | None:
    """Position (0 = first, 1 = last) of each judged field's top-level key in the output as shown."""
    from construct_eval.data.runs import RunError

    try:
        outputs = {r["id"]: r.get("output") for r in run.outputs() if "output" in r}
    except RunError:  # documents referred to by id whose dataset is not available here
        return None
    out: list[float] = []
    for r in rows:
        output = outputs.get(r["doc_id"])
        if not isinstance(output, Mapping) or r["field"] == DOCUMENT:
            return None
        variant = PromptVariant.parse(r.get("variant") or "")
        keys = list(variant.reorder(output))
        top = parse_path(r["field"])[0]
        keys = variant.place_target(keys, top) if isinstance(top, str) else keys
        if top not in keys or len(keys) < 2:
            return None
        out.append(keys.index(top) / (len(keys) - 1))
    return out


def _item_errors(run: RunDir, items: Sequence[tuple[str, str]]) -> dict[tuple[str, str], bool]:
    """Whether each (document, field or ``__doc__``) item is wrong, where its labels say."""
    labels = load_labels(run)
    wrong: dict[tuple[str, str], bool] = {}
    for doc_id, field_name in items:
        lab = labels.get(doc_id)
        if lab is None:
            continue
        w = lab.wrong if field_name == DOCUMENT else judged_field_errors(lab, [field_name])[field_name]
        if w is not None:
            wrong[(doc_id, field_name)] = w
    return wrong


def bias_run(
    run: RunDir,
    *,
    mode: str = "doc",
    variants: Sequence[str] | None = None,
    out_dir: Path | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    value: str = "rating",
    elicitation: str | None = None,
) -> BiasReport:
    """Positional-bias tables and figures from the judgments of ``run`` under several variants.

    ``value="expected_rating"`` tests the log-prob twin instead of the verbalized rating: a
    judge that writes the same rating under every order can still move its probabilities.
    Only judgments of one elicitation are paired: ``elicitation`` (a ``constrained`` label), by
    default the run's first, the one its plain scorer names stand for.
    """
    from construct_eval.reports.report_objects import BiasReport
    from construct_eval.stats import bias

    out_dir = out_dir or run.path
    every = list(judgment_rows(run))
    judgments = [r for r in every if r.get("mode") == mode]
    if elicitation is None:
        elicitation = (elicitations(every) or [None])[0]
    ids = [PromptVariant.parse(v).id for v in variants] if variants else None
    paired = bias.paired_ratings(judgments, mode=mode, variants=ids, value=value, elicitation=elicitation)
    tag = mode if value == "rating" else f"{mode}_{value}"
    wrong = _item_errors(run, paired.items)
    pairs = bias.pairwise_tests(paired, wrong=wrong or None, base=paired.variants[0], n_boot=n_boot, seed=seed)
    # named by mode and value, as the Friedman and debiasing tables are: the rating's and the
    # expected rating's shifts are two tables, not one overwriting the other
    write_table(
        pairs,
        out_dir / "metrics" / f"bias_pairs_{tag}",
        f"{value} shifts against {paired.variants[0]} ({mode})",
    )
    report = BiasReport(run=run.path.name, mode=mode, value=value, paired=paired, pairs=pairs)
    if len(paired.variants) >= 3:
        report.friedman = bias.friedman_test(paired)
        write_table([report.friedman], out_dir / "metrics" / f"bias_friedman_{tag}", "Friedman test")
    if wrong:
        report.debiasing = bias.debiasing_report(paired, wrong)
        write_table(report.debiasing, out_dir / "metrics" / f"bias_debiasing_{tag}", "Mean over K orders")
    complete = set(paired.items)
    rows = [
        r
        for r in judgments
        if (r["doc_id"], r["field"]) in complete and r.get("status") == "ok" and r.get(value) is not None
    ]
    positions = _positions(run, rows) if mode != "doc" else None
    if positions is not None and len(set(positions)) > 1:
        try:
            effect = bias.position_effect(
                [r[value] for r in rows], positions, [(r["doc_id"], r["field"]) for r in rows], seed=seed
            )
            report.position = effect
            write_table([effect.__dict__], out_dir / "metrics" / f"bias_position_{tag}", "Rating vs position")
        except ValueError:
            pass
    report.figures = report.save_figures(out_dir)
    return report


def elicitation_run(
    run: RunDir,
    *,
    mode: str = "doc",
    variant: str | None = None,
    out_dir: Path | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    value: str = "rating",
) -> dict[str, Any]:
    """How the way of asking moves the rating: the run's elicitations (the forced rating first,
    then the free recipe) on the same items under one prompt order (default: the default order),
    paired as :func:`bias_run` pairs orders, with each one's use of the scale on those items.
    Written to ``metrics/elicitation_pairs_<mode>[_expected_rating]``."""
    from construct_eval.stats import bias

    out_dir = out_dir or run.path
    default_id = PromptVariant().id
    variant_id = PromptVariant.parse(variant).id if variant else default_id
    judgments = [{**r, "variant": r.get("variant") or default_id} for r in judgment_rows(run) if r.get("mode") == mode]
    asked = elicitations(r for r in judgments if r["variant"] == variant_id)
    if len(asked) < 2:
        raise ValueError(f"{run.path.name}: {mode} judgments under {variant_id} were asked one way only ({asked})")
    paired = bias.paired_elicitations(judgments, mode=mode, variant=variant_id, elicitations=asked, value=value)
    wrong = _item_errors(run, paired.items)
    pairs = bias.pairwise_tests(paired, wrong=wrong or None, base=asked[0], n_boot=n_boot, seed=seed)
    for r in pairs:
        r["variant"] = variant_id
        for side in ("a", "b"):
            column = paired.variants.index(r[f"variant_{side}"])
            r[f"use_{side}"] = rating_use(paired.ratings[:, column].tolist()) if len(paired.items) else ""
    tag = mode if value == "rating" else f"{mode}_{value}"
    write_table(
        pairs,
        out_dir / "metrics" / f"elicitation_pairs_{tag}",
        f"{value} shifts from {asked[0]} to the other ways of asking ({mode}, {variant_id})",
    )
    return {"paired": paired, "pairs": pairs}


def judge_overview(run: RunDir, *, n_boot: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """What a judge did in a run, one row per mode and prompt variant: the model-comparison view.

    Seconds per call (median over calls not served from the cache), the unscored share and
    its commonest reason, the rating distribution and the share of the commonest rating, and,
    where labels exist, the AUROC (with a document-bootstrap interval) of the rating and of the
    expected rating for finding wrong items at the mode's level.
    """
    labels = load_labels(run)
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for r in judgment_rows(run):
        groups[(r["mode"], r.get("variant") or PromptVariant().id)].append(r)
    out = []
    for (mode, variant), rows in sorted(groups.items()):
        calls = {r["call_id"]: r for r in rows}
        fresh = [float(r["latency_s"]) for r in calls.values() if not r.get("cached") and r.get("latency_s")]
        ratings = Counter(int(r["rating"]) for r in rows if r["status"] == "ok")
        reasons = Counter(r.get("reason") or "?" for r in rows if r["status"] != "ok")
        row: dict[str, Any] = {
            "run": run.path.name,
            "model": ",".join(sorted({str(r.get("model")) for r in rows})),
            "mode": mode,
            "variant": variant,
            "constrained": ",".join(sorted({str(r.get("constrained") or "none") for r in rows})),
            "judgments": len(rows),
            "calls": len(calls),
            "s_per_call": round(float(np.median(fresh)), 2) if fresh else float("nan"),
            "unscored_rate": round(sum(reasons.values()) / len(rows), 4),
            "top_unscored_reason": reasons.most_common(1)[0][0] if reasons else "",
            "ratings": " ".join(f"{v}:{ratings[v]}" for v in sorted(ratings)),
            "modal_rating_share": round(max(ratings.values()) / sum(ratings.values()), 3) if ratings else float("nan"),
        }
        if labels:
            level = "document" if mode == "doc" else "field"
            items = [i for i in _judge_items(rows, labels) if i.level == level]
            for it, name in zip(items[:2], ("rating", "expected"), strict=False):
                det = detection_table([it], n_boot=n_boot, seed=seed)[0]
                row[f"auroc_{name}"] = det.get("auroc", float("nan"))
                row[f"auroc_{name}_low"] = det.get("auroc_low", float("nan"))
                row[f"auroc_{name}_high"] = det.get("auroc_high", float("nan"))
                row[f"n_{name}"] = it.n
                row[f"wrong_{name}"] = int(sum(it.wrong))
        out.append(row)
    return out
