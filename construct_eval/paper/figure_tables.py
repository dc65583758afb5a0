"""The paper figures' numbers as tables: LaTeX (booktabs) for the paper, CSV for everything.

Each table holds every row (every scorer, every dataset), also those a figure leaves out for
readability, with the scorer's internal name (CSV) and its reader's label (LaTeX, through
:func:`~construct_eval.display.style.display_name`). Bold in a detection table marks a score
better than its runner-up by a paired difference whose interval excludes zero after Holm
correction (:func:`~construct_eval.reports.figure_pairs.best_marks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from construct_eval.display.style import order_label, wrap
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.paper import paper_tables as pt
from construct_eval.paper.figure_data import MIN_CLASS, Estimate, ValueTable, _float, order_key, read_detection
from construct_eval.paper.paper_plots import row_labels
from construct_eval.reports import figure_pairs


def _dataset(d: str) -> str:
    name, how = dataset_label(d)
    return f"{name} ({how})"


def flat_datasets(estimates: Sequence[Estimate]) -> set[str]:
    """Datasets whose schema is flat (every field top-level): each per-leaf row has a per-top twin
    with the same items and the same estimate, so the tables show it once (as per top field)."""
    by = {(e.dataset, e.scorer): e for e in estimates}
    twins: dict[str, list[bool]] = {}
    for (d, s), e in by.items():
        if s.endswith("@leaf"):
            top = by.get((d, s.removesuffix("@leaf") + "@top"))
            same = top is not None and (top.n, top.positives, round(top.value, 6)) == (
                e.n,
                e.positives,
                round(e.value, 6),
            )
            twins.setdefault(d, []).append(same)
    return {d for d, v in twins.items() if v and all(v)}


def _collapsed(estimates: Sequence[Estimate]) -> list[Estimate]:
    flat = flat_datasets(estimates)
    return [e for e in estimates if not (e.dataset in flat and e.scorer.endswith("@leaf"))]


def _row_labels(rows: Sequence[Any]) -> dict[str, str]:
    """Scorer -> the label of its table row, as the figures label their rows
    (:func:`paper_plots.row_labels`)."""
    return row_labels(rows)


def column_best(estimates: Sequence[Estimate]) -> dict[str, str]:
    """Dataset -> the scorer bold in its column: the best powered, label-free, varying score
    above 0.5 (none if no score qualifies)."""
    best: dict[str, Estimate] = {}
    for e in estimates:
        if e.uses_labels or e.weak or e.flat or not e.value > 0.5:
            continue
        if e.dataset not in best or e.value > best[e.dataset].value:
            best[e.dataset] = e
    return {d: e.scorer for d, e in best.items()}


def separated_best(
    estimates: Sequence[Estimate], marks: Mapping[tuple[str, str, str], Any], level: str
) -> dict[str, str]:
    """Dataset -> the scorer bold in its column: the column's best (:func:`column_best`) only where
    it is separated from chance (its interval above 0.5) and from the runner-up (the next label-free
    score on the same items: their paired difference's interval excludes 0 after Holm,
    :attr:`~construct_eval.reports.figure_pairs.BestMark.is_best`; a score with no runner-up is
    separated from none)."""
    by = {(e.dataset, e.scorer): e for e in estimates}
    bold = {}
    for dataset, scorer in column_best(estimates).items():
        e = by[(dataset, scorer)]
        m = marks.get((dataset, level, pt.granularity(e.sid)))
        if e.low > 0.5 and m is not None and m.top == scorer and m.is_best:
            bold[dataset] = scorer
    return bold


def detection_tables(
    run_dirs: Sequence[Path], metric: str, level: str, out: Path, items_of: Mapping[str, Any]
) -> list[Path]:
    """LaTeX and CSV twins of a forest figure's numbers, with best marks."""
    every = [e for r in run_dirs for e in read_detection(r, metric) if e.level == level]
    if not every:
        return []
    estimates = _collapsed(every)
    datasets = list(dict.fromkeys(e.dataset for e in estimates))
    label = _row_labels(estimates)
    rows = sorted(set(label.values()), key=lambda lab: min(order_key(s) for s, x in label.items() if x == lab))
    candidates: dict[tuple[str, str, str], list[tuple[str, float, bool]]] = {}
    for e in estimates:
        if not e.uses_labels:
            key = (e.dataset, level, pt.granularity(e.sid))
            candidates.setdefault(key, []).append((e.scorer, e.value, e.underpowered))
    marks = figure_pairs.best_marks(candidates, items_of, metric=metric)
    bold = separated_best(estimates, marks, level) if metric == "auroc" else {}
    cells = {(e.dataset, label[e.scorer]): e for e in estimates}
    long_rows = []
    for e in estimates:
        m = marks.get((e.dataset, level, pt.granularity(e.sid)))
        top = bool(m and m.top == e.scorer)
        long_rows.append(
            {
                "dataset": e.dataset, "level": level, "scorer": e.scorer, "label": label[e.scorer], "metric": metric,
                "value": e.value, "low": e.low, "high": e.high, "cell": pt.fmt_estimate(e.value, e.low, e.high),
                "n": e.n, "positives": e.positives, "prevalence": e.prevalence,
                "underpowered": e.weak, "flat": e.flat, "uses_labels": e.uses_labels,
                "best": bold.get(e.dataset) == e.scorer,
                "runner_up": m.runner_up if top and m else "",
                "separated_from_runner_up": bool(top and m and m.is_best),
                "difference_vs_runner_up": m.difference if top and m else "",
                "difference_low": m.low if top and m else "",
                "difference_high": m.high if top and m else "",
                "p_holm": m.p_holm if top and m else "",
            }
        )  # fmt: skip
    stem = out / f"table_{metric}_{level}"
    written = [pt.write_csv(long_rows, stem.with_suffix(".csv"))]
    unit = "documents" if level == "document" else "fields"
    first_of = {d: max((e for e in estimates if e.dataset == d), key=lambda e: e.n) for d in datasets}
    flat = sorted(flat_datasets(every))
    groups = _column_groups(datasets)
    for k, group in enumerate(groups):
        header = ["score", *(_stacked(d, first_of[d]) for d in group)]
        body = []
        for lab in rows:
            if not any((d, lab) in cells for d in group):
                continue  # a score not asked on these datasets: no empty row
            name = pt.latex_escape(lab) + (
                r"$^\ddagger$" if any(e.uses_labels for e in estimates if label[e.scorer] == lab) else ""
            )
            row = [name]
            for d in group:
                e = cells.get((d, lab))
                if e is None:
                    row.append("")
                    continue
                text = pt.fmt_estimate(e.value, e.low, e.high)
                if bold.get(d) == e.scorer:
                    text = rf"\textbf{{{text}}}"
                text += r"$^\dagger$" if e.weak else ""
                notes = [f"n={e.n}"] if e.n != first_of[d].n else []
                notes += [e.flat_note.split("% ")[-1]] if e.flat else []  # "96% one value": "one value"
                row.append(_two_lines(text, f"({', '.join(notes)})") if notes else text)
            body.append(row)
        mine = [d for d in flat if d in group]
        part = f" (part {k + 1} of {len(groups)})" if len(groups) > 1 else ""
        caption = (
            f"{metric.upper()} for finding wrong {unit}{part}, 95% document-bootstrap intervals."
            + (
                " Bold: the best powered, label-free score of a column where its interval is above 0.5 and its"
                " paired difference from the runner-up (the next label-free score, same items) excludes 0 after Holm."
                if metric == "auroc"
                else ""
            )
            + f" Dagger: underpowered (fewer than {MIN_CLASS} wrong or right items or documents with one, no"
            " interval, or an interval wider than 0.3). Double dagger: uses the labels (baseline). 2 values"
            " (or 1): a rating with fewer than 3 values holding 5% of the items each, a threshold rather than a"
            " scale (mostly 2 values: a few items hold others); constant: one value, no ranking."
            + (
                f" {', '.join(_dataset(d) for d in mine)}: every field is top-level, so per leaf and per top field"
                " are one row (per top field)."
                if mine and level == "field"
                else ""
            )
        )
        name = stem.name if k == 0 else f"{stem.name}_{k + 1}"
        tex = pt.latex_table(header, body, caption=caption, label=f"tab:{metric}-{level}" + (f"-{k + 1}" if k else ""),
                             escape=False, align=SCORE_COLUMN + "r" * len(group))  # fmt: skip
        (out / f"{name}.tex").write_text(tex)
        written.append(out / f"{name}.tex")
    return written


MAX_TABLE_COLUMNS = 4
"""Dataset columns a LaTeX detection table holds before it continues in a numbered table: four
estimates with intervals and the score's name fit the text width in footnotesize."""


def _column_groups(datasets: Sequence[str]) -> list[list[str]]:
    """The datasets in LaTeX tables of at most :data:`MAX_TABLE_COLUMNS` columns: planted errors
    first (the study's main evidence), then the generators' own errors, each in dataset order."""
    planted = [d for d in datasets if dataset_label(d)[1].startswith("planted")]
    ordered = planted + [d for d in datasets if d not in planted]
    return [ordered[i : i + MAX_TABLE_COLUMNS] for i in range(0, len(ordered), MAX_TABLE_COLUMNS)]


SCORE_COLUMN = pt.wrapping(1.1)
"""The score's name wraps within 1.1 in (``\\usepackage{array}``): with four columns of estimates the
table stays inside :data:`~construct_eval.paper.paper_tables.TEXT_WIDTH_IN`."""


def _two_lines(first: str, second: str) -> str:
    """A cell on two lines (the estimate, then its own n or "flat"), as a nested tabular."""
    return r"\begin{tabular}[t]{@{}r@{}}" + first + r" \\ " + second + r"\end{tabular}"


def _stacked(dataset: str, first: Estimate) -> str:
    """A column header on short lines (dataset, wrapped; how its errors arose; n; wrong), as a nested
    tabular, so that no package beyond booktabs is needed."""
    name, how = dataset_label(dataset)
    names = [pt.latex_escape(n) for n in wrap(name, HEADER_CHARS).split("\n")]  # a long name on lines
    lines = [*names, pt.latex_escape(how.split(",")[0]), f"n={first.n}", f"{first.positives} wrong"]
    return r"\begin{tabular}[b]{@{}c@{}}" + r" \\ ".join(lines) + r"\end{tabular}"


def review_tables(rows: Sequence[Mapping[str, Any]], level: str, out: Path) -> list[Path]:
    """Precision and recall at each review budget, every score and dataset."""
    stem = out / f"table_review_{level}"
    flat = {r["dataset"] for r in rows} & set(flat_review_datasets(rows))
    rows = [r for r in rows if not (r["dataset"] in flat and str(r["scorer"]).endswith("@leaf"))]
    label = _row_labels(rows)
    written = [pt.write_csv([{**r, "label": label[r["scorer"]]} for r in rows], stem.with_suffix(".csv"))]
    budgets = sorted({r["budget"] for r in rows})
    unit = "documents" if level == "document" else "fields"
    keyed = {(r["dataset"], r["scorer"], r["budget"]): r for r in rows}
    pairs = list(dict.fromkeys((r["dataset"], r["scorer"]) for r in rows))
    for what in ("precision", "recall"):
        groups: dict[str, list[list[str]]] = {}
        for dataset, scorer in pairs:
            cells = []
            for b in budgets:
                r = keyed.get((dataset, scorer, b))
                cells.append(pt.fmt_estimate(r[what], r[f"{what}_low"], r[f"{what}_high"]) if r else "")
            groups.setdefault(_dataset(dataset), []).append([label[scorer], *cells])
        meaning = f"share of flagged {unit} that are wrong" if what == "precision" else f"share of wrong {unit} found"
        caption = f"{what.capitalize()} ({meaning}) when reviewing the lowest-scored share of {unit}, 95% intervals."
        header = ["score", *(f"{b}%" for b in budgets)]
        path = out / f"table_review_{what}_{level}.tex"
        tex = pt.latex_table(header, [], caption=caption, label=f"tab:review-{what}-{level}",
                             align=pt.wrapping(1.5) + "r" * len(budgets), groups=list(groups.items()))  # fmt: skip
        path.write_text(tex)
        written.append(path)
    return written


def flat_review_datasets(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Datasets whose per-leaf review rows equal their per-top twins at every budget (a flat schema)."""
    by = {(r["dataset"], r["scorer"], r["budget"]): r for r in rows}
    same: dict[str, list[bool]] = {}
    for (d, s, b), r in by.items():
        if str(s).endswith("@leaf"):
            t = by.get((d, str(s).removesuffix("@leaf") + "@top", b))
            keys = ("n", "positives", "recall", "precision")
            same.setdefault(d, []).append(t is not None and all(str(t[k]) == str(r[k]) for k in keys))
    return [d for d, v in same.items() if v and all(v)]


def meaning_tables(tables: Sequence[ValueTable], out: Path) -> list[Path]:
    """What each rating value means, every written rating of every run: one long CSV and one
    LaTeX table (observed error rate with its Wilson interval, n, the naive reading and maps)."""
    label = _row_labels(tables)
    long_rows = [
        {"dataset": t.dataset, "level": t.level, "scorer": t.scorer, "label": label[t.scorer], **r}
        for t in tables
        for r in t.rows
    ]
    stem = out / "table_meaning"
    written = [pt.write_csv(long_rows, stem.with_suffix(".csv"))]
    maps = ("naive", "isotonic", "platt")
    groups = []
    for t in tables:
        body = [
            [
                pt.fmt_value(_float(r["value"]), 0), r["n"],
                pt.fmt_estimate(_float(r["error_rate"]), _float(r["error_low"]), _float(r["error_high"])),
                *(pt.fmt_value(_float(r.get(m))) if r.get(m) not in (None, "") else "" for m in maps),
            ]
            for r in t.rows
        ]  # fmt: skip
        groups.append((f"{_dataset(t.dataset)}: {label[t.scorer]}, {t.level}s", body))
    header = ["rating", "n", "observed error rate", *maps]
    caption = "What each rating means: Wilson 95% intervals; maps fitted out of fold, grouped by document."
    tex = pt.latex_table(header, [], caption=caption, label="tab:meaning", align="rrr" + "r" * len(maps), groups=groups,
                         group_width_in=2.6)  # fmt: skip
    stem.with_suffix(".tex").write_text(tex)
    return [*written, stem.with_suffix(".tex")]


def _p_value(p: float) -> str:
    """A p-value as a table prints it: three decimals, "< 0.001" below that."""
    return "< 0.001" if p < 0.001 else pt.fmt_value(p, 3)


def bias_tables(rows: Sequence[Mapping[str, Any]], stem: Path, value: str) -> list[Path]:
    """The paired shift of ``value`` under each prompt order, every run."""
    written = [pt.write_csv([{**r, "order": order_label(str(r["variant_b"]))} for r in rows], stem.with_suffix(".csv"))]
    groups: dict[str, list[list[Any]]] = {}
    for r in rows:
        groups.setdefault(_dataset(r["run"]), []).append(
        [
            order_label(str(r["variant_b"])), r["n"],
            pt.fmt_estimate(_float(r["mean_shift"]), _float(r["shift_low"]), _float(r["shift_high"])),
            pt.fmt_value(_float(r["share_changed"])), _p_value(_float(r.get("wilcoxon_p_holm"))),
            pt.fmt_estimate(_float(r.get("auroc_diff")), _float(r.get("auroc_diff_low")), _float(r.get("auroc_diff_high"))),
        ])  # fmt: skip
    header = ["order", "n", "mean shift", r"share changed", "Wilcoxon p (Holm)", "AUROC change"]
    caption = (
        f"Paired shift of the {value.replace('_', ' ')} against the default order, 95% document-bootstrap intervals."
    )
    tex = pt.latex_table(header, [], caption=caption, label=f"tab:{stem.name}", align=pt.wrapping(0.9) + "rrrrr",
                         groups=list(groups.items()))  # fmt: skip
    stem.with_suffix(".tex").write_text(tex)
    return [*written, stem.with_suffix(".tex")]


HEADER_CHARS = 19
"""A dataset's name in a table header wraps at this many characters, so a long name does not
widen its column past the estimates under it."""


def _two_line_header(dataset: str) -> str:
    """A dataset's column header on short lines: its name, how its errors arose, its size."""
    name, how = dataset_label(dataset)
    names = wrap(name, HEADER_CHARS).split("\n")  # "synthetic shipping notices (version 2)" on lines
    lines = [*(pt.latex_escape(n) for n in names), *(pt.latex_escape(part.strip()) for part in how.split(","))]
    return r"\begin{tabular}[b]{@{}c@{}}" + r" \\ ".join(lines) + r"\end{tabular}"


def planted_tables(estimates: Sequence[Estimate], out: Path) -> list[Path]:
    """AUROC per planted error kind within output kinds (the numbers of ``appx_planted_kind``,
    from the same rows): a group per kind (near misses first, marked *), a row per score, a column
    per dataset (at most :data:`MAX_TABLE_COLUMNS`, continued in ``_2``). A cell reads the AUROC
    with its interval (and, under it, its wrong count where it is fewer than its group's: a score
    asked on fewer documents), "too few" without the power of a main row, "constant" for one
    value, "none planted" where the dataset has no error of the kind in that output kind, and
    "not run" where the score was not asked there. The CSV holds every row."""
    from construct_eval.display.style import PLANTED_LABELS, planted_row_label

    if not estimates:
        return []
    stem = out / "table_planted_kind"
    label = _row_labels(estimates)
    csv_rows = [
        {"dataset": e.dataset, "planted_kind": e.planted, "fields": e.kind, "scorer": e.scorer, "label": label[e.scorer],
         "n_wrong": e.positives, "n_correct": e.n - e.positives, "docs_wrong": e.docs_wrong,
         "docs_correct": e.docs_right, "auroc": e.value, "auroc_low": e.low, "auroc_high": e.high, "powered": e.powered}
        for e in estimates
    ]  # fmt: skip
    written = [pt.write_csv(csv_rows, stem.with_suffix(".csv"))]
    keyed = {(e.dataset, e.planted, e.kind, label[e.scorer]): e for e in estimates}
    kinds = [(p, k) for p in PLANTED_LABELS for k in ("value", "null or empty") if any(
        (e.planted, e.kind) == (p, k) for e in estimates)]  # fmt: skip
    scores = sorted(dict.fromkeys(label.values()), key=lambda lab: min(
        order_key(s) for s, x in label.items() if x == lab))  # fmt: skip
    datasets = list(dict.fromkeys(e.dataset for e in estimates))

    def cell(e: Estimate | None, has_kind: bool, most: int) -> str:
        if e is None:
            return "not run" if has_kind else "none planted"
        if not e.powered:
            return "too few"
        if e.flat:
            return "constant"
        text = pt.fmt_estimate(e.value, e.low, e.high)
        return _two_lines(text, f"{e.positives} wrong") if e.positives < most else text

    for k, group in enumerate(_column_groups(datasets)):
        groups = []
        for planted, kind in kinds:
            mine = {d: [e for e in estimates if (e.dataset, e.planted, e.kind) == (d, planted, kind)] for d in group}
            if not any(e.powered for es in mine.values() for e in es):
                continue
            most = {d: max((e.positives for e in es), default=0) for d, es in mine.items()}
            rows = []
            for lab in scores:
                found = [keyed.get((d, planted, kind, lab)) for d in group]
                if all(e is None for e in found):
                    continue
                rows.append(
                    [
                        pt.latex_escape(lab),
                        *(cell(e, bool(mine[d]), most[d]) for d, e in zip(group, found, strict=True)),
                    ]
                )
            groups.append((pt.latex_escape(planted_row_label(planted, kind)), rows))
        header = [""] + [_two_line_header(d) for d in group]
        caption = (
            "AUROC of each planted error kind's wrong fields against the correct fields of the same output kind "
            "(filled ones against filled, fields left empty against empty), with 95% document-bootstrap "
            "intervals; * a near miss. A cell needs at least "
            f"{MIN_CLASS} wrong fields of the kind, {MIN_CLASS} documents holding them, {MIN_CLASS} correct fields "
            f"and {MIN_CLASS} documents with one, and an interval (else ``too few''); a count under a cell: the score "
            "was asked on fewer documents."
        )
        name = stem.name if k == 0 else f"{stem.name}_{k + 1}"
        tex = pt.latex_table(header, [], caption=caption, label="tab:planted-kind" + (f"-{k + 1}" if k else ""),
                             align=SCORE_COLUMN + "r" * len(group), groups=groups, escape=False)  # fmt: skip
        (out / f"{name}.tex").write_text(tex)
        written.append(out / f"{name}.tex")
    return written
