"""The paper's figure set written to a folder (``construct-eval figures``): the figures of
:func:`~construct_eval.paper.figures.build_figures` as PDF, SVG and 300-dpi PNG, their numbers
as LaTeX and CSV tables (:mod:`~construct_eval.paper.figure_tables`), ``figures.md`` saying what
each file shows and ``manifest.json`` mapping each to its message, datasets, scores and the run
files (with hashes) it was made from.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from construct_eval.display.style import MAX_SERIES, PNG_DPI, model_label, save_all
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.paper import figure_data as fd
from construct_eval.paper import figure_tables as ft
from construct_eval.paper.captions import Caption
from construct_eval.paper.figures import MIN_HEADROOM, PLANTED, build_figures, planted_estimates
from construct_eval.reports import figure_pairs


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


run_files = fd.run_files


class _Manifest:
    """Which run files (and their hashes) each written file came from, and what it shows."""

    def __init__(self, out: Path, command: str, runs: Sequence[Path], left_out: Mapping[str, str]):
        self.out, self.command, self.runs, self.left_out = out, command, runs, left_out
        self.entries: dict[str, dict[str, Any]] = {}
        self._hashes: dict[Path, str] = {}

    def _inputs(self, paths: Iterable[Path]) -> dict[str, str]:
        found = {}
        for p in sorted(set(paths)):
            if p.exists():
                if p not in self._hashes:
                    self._hashes[p] = _sha256(p)
                found[str(p)] = self._hashes[p]
        return found

    def add(self, written: Iterable[Path], inputs: Iterable[Path], what: str, **about: Any) -> None:
        sources = self._inputs(inputs)
        for path in written:
            self.entries[path.name] = {"what": what, **about, "sha256": _sha256(path), "inputs": sources}

    def write(self) -> Path:
        path = self.out / "manifest.json"
        body = {
            "command": self.command,
            "runs": [str(r) for r in self.runs],
            "left_out": dict(self.left_out),
            "files": dict(sorted(self.entries.items())),
        }
        path.write_text(json.dumps(body, indent=1) + "\n")
        return path


OUTPUT_PATTERNS = ("*.pdf", "*.svg", "*.png", "table_*.csv", "table_*.tex", "manifest.json", "figures.md")
"""What :func:`paper_figures` writes into its folder (and so clears there before writing)."""


def clear_outputs(out: Path) -> list[Path]:
    """Remove what an earlier :func:`paper_figures` wrote into ``out`` (files matching
    :data:`OUTPUT_PATTERNS`, not in subfolders), so a figure the set no longer makes cannot stay
    behind beside the new ones."""
    removed = []
    for pattern in OUTPUT_PATTERNS:
        for path in sorted(Path(out).glob(pattern)):
            if path.is_file():
                path.unlink()
                removed.append(path)
    return removed


def read_left_out(path: str | Path) -> dict[str, str]:
    """The runs a paper set leaves out, with why: one run folder name a line of ``path``, its
    reason after a ``#`` (``name  # why``); blank lines and lines starting with ``#`` are skipped."""
    left: dict[str, str] = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        name, _, why = line.partition("#")
        if name.strip():
            if not why.strip():
                raise ValueError(f"{path}, line {number}: {name.strip()!r} is left out without a reason after '#'")
            left[name.strip()] = why.strip()
    return left


def left_out_words(left_out: Mapping[str, str], included: Iterable[str | Path]) -> str:
    """The runs a set leaves out, each as "label (how): why", in the figures' words; a left-out
    run whose label is an included run's (the figures drop a synthetic kind's version) is called
    by its own version ("version 1" where its kind has none), so no reader takes the included run
    for the left-out one."""
    from construct_eval.display.style import dataset_label as versioned

    taken = {dataset_label(Path(r).name) for r in included}
    said = []
    for name, why in left_out.items():
        label, how = dataset_label(name)
        if (label, how) in taken:
            full = versioned(name)[0]
            label = full if full != label else f"{label} (version 1)"
        said.append(f"{label} ({how}): {why}")
    return "; ".join(said)


def paper_set(runs_root: str | Path, left_out: Mapping[str, str] | None = None) -> list[Path]:
    """The runs a paper set draws: every run folder under ``runs_root`` with stored tables (a
    non-empty ``metrics/detection.csv``), in name order, except those named in ``left_out``. A name
    there that is no run folder under ``runs_root`` is an error: a typo would otherwise leave the
    run it meant in the set."""
    root = Path(runs_root)
    left = dict(left_out or {})
    unknown = sorted(name for name in left if not (root / name).is_dir())
    if unknown:
        raise ValueError(f"left out, but no run folder under {root}: {', '.join(unknown)}")
    return sorted(
        p
        for p in root.glob("*/")
        if p.name not in left
        and (p / "metrics" / "detection.csv").is_file()
        and (p / "metrics" / "detection.csv").stat().st_size > 0
    )


def _tables(run_dirs: Sequence[Path], out: Path) -> list[tuple[list[Path], list[Path], str]]:
    """The set's tables written into ``out``: (files, the run files they read, what they are)."""
    detection_inputs = [r / "metrics" / "detection.csv" for r in run_dirs]
    raw_inputs = [r / name for r in run_dirs for name in run_files()]
    items_of = figure_pairs.items_of(run_dirs)
    tables: list[tuple[list[Path], list[Path], str]] = []
    for metric in ("auroc", "auprc"):
        for level in ("document", "field"):
            paths = ft.detection_tables(run_dirs, metric, level, out, items_of)
            tables.append((paths, [*detection_inputs, *raw_inputs], f"{metric.upper()} per score, {level}s, every row"))
    for level in ("document", "field"):
        rows = fd.review_rows(run_dirs, level)
        if rows:
            tables.append((ft.review_tables(rows, level, out), detection_inputs, f"review budgets, {level}s"))
    planted = planted_estimates(run_dirs)
    if planted:
        inputs = [r / "metrics" / "detection_by_planted_kind_within_output_kind.csv" for r in run_dirs]
        tables.append((ft.planted_tables(planted, out), inputs, "AUROC per planted error kind, within output kinds"))
    values = [t for r in run_dirs for t in fd.value_tables(r)]
    if values:
        tables.append((ft.meaning_tables(values, out), [t.path for t in values], "what each rating value means"))
    for value in ("rating", "expected_rating"):
        rows, inputs = fd.bias_rows(run_dirs, value)
        if rows:
            tables.append(
                (
                    ft.bias_tables(rows, out / f"table_bias_{value}", value),
                    inputs,
                    f"order shifts, {value.replace('_', ' ')}",
                )
            )
    return tables


def _write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    """``rows`` as a CSV (floats to four decimals), columns in the first row's order."""
    import csv

    columns = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})
    return path


def _appendix_caption(message: Caption) -> list[str]:
    """An appendix figure's caption under its line in ``figures.md``, where it has a message (a
    main figure's planted-error panels): its answer in italics, then what else it draws, indented
    under the list item; none where it has no message."""
    if not message:
        return []
    also = message.also
    return [
        "",
        f"  *{message.answer}*",
        *(["", "  Also in the figure:", *(f"  - {a}" for a in also)] if also else []),
        "",
    ]


def _planted_words(figures: Sequence[Any], main_only: bool = False) -> list[str]:
    """The lines of ``figures.md`` saying which main figures draw only a generator's errors and
    where their planted-error panels are (the appendix figures ending ``_planted``; ``main_only``:
    a set without its appendix, which the full set holds), from the figures made; none where no
    such appendix figure was made."""
    planted = [f.name for f in figures if f.appendix and f.name.endswith(PLANTED)]
    if not planted:
        return []
    mains = [n.removeprefix("appx_").removesuffix(PLANTED) for n in planted]
    resting = [f"`{f.name}`" for f in figures if not f.appendix and f.name not in mains
               and not all(fd.generators_errors(d) for d in f.datasets)]  # fmt: skip
    said = [
        f"The figures that ask which score finds errors ({', '.join(f'`{n}`' for n in mains)}) draw only the datasets",
        "whose errors a generator made; their panels of errors the package planted (found by checks written knowing",
        f"them, and by no generator's scores) are appendix figures of the same form ({', '.join(f'`{n}`' for n in planted)}),",
        "each with its own caption" + (" (in the full set, not written here)." if main_only else "."),
    ]
    if resting:
        said[-1] += f" {' and '.join(resting)} draw planted errors too; their captions say so in their first clause."
    return said


def _count(n: int) -> str:
    words = ("No figures", "One figure", "Two figures", "Three figures", "Four figures", "Five figures", "Six figures")
    return words[n] if n < len(words) else f"{n} figures"


def _models_words(run_dirs: Sequence[Path]) -> str:
    """Which models the main figures' runs used (their ``run.json``), in a paragraph: the judge,
    CONSTRUCT's LLM and each generator, with the datasets of each ("on every dataset" where one
    model judged them all), so no finding about "the judge" reads as one about LLM judges in
    general."""
    found: dict[str, dict[str, list[str]]] = {}
    for r in run_dirs:
        name, how = dataset_label(r.name)
        for part, model in fd.run_models(r).items():
            found.setdefault(part, {}).setdefault(model_label(model), []).append(f"{name} ({how.split(',')[0]})")
    said = []
    for part, words in (
        ("judge", "the LLM judge is"),
        ("construct", "CONSTRUCT's LLM is"),
        ("generator", "the generator is"),
    ):
        models = found.get(part, {})
        if len(models) == 1 and part == "judge" and len(next(iter(models.values()))) == len(run_dirs):
            said.append(f"{words} {next(iter(models))} on every dataset of the main figures")
        elif models:
            said.append(f"{words} " + " and ".join(f"{m} on {', '.join(dict.fromkeys(w))}" for m, w in models.items()))
    if not said:
        return ""
    text = "; ".join(said)
    return (f"Models (each run's `run.json`): {text}. Every finding on a judge or on CONSTRUCT is about these small "
            "local models, not about LLM judges in general.")  # fmt: skip


def paper_figures(
    runs: Iterable[str | Path],
    out: str | Path,
    *,
    venue: str = "neurips",
    column: str = "full",
    command: str = "",
    main_only: bool = False,
    left_out: Mapping[str, str] | None = None,
    only: str | None = None,
    scorers: Sequence[str] | None = None,
) -> list[Path]:
    """Every paper figure and table for ``runs`` (in order of dataset name, whatever order they are
    given in; ``main_only``: the main figures alone, e.g. a one-column set) into ``out``, after
    clearing what an earlier call wrote there
    (:func:`clear_outputs`): figures as PDF, SVG and PNG, tables as LaTeX and CSV, ``figures.md``
    showing each main figure with its message (its caption) and listing the others, and
    ``manifest.json`` listing what each file shows, its message, and the run files it was made
    from, with their hashes, and the command. ``left_out`` (run name: why, e.g. from
    :func:`read_left_out`) is only reported: ``figures.md`` and the manifest say which evaluated runs
    the set leaves out and why.

    ``only``: the one figure of that name, written into ``out`` beside what is there (nothing
    cleared, no tables, no manifest or ``figures.md``); ``scorers``: only those scorers drawn
    (:func:`~construct_eval.paper.figures.scorer_filter`)."""

    run_dirs = sorted({Path(r) for r in runs}, key=lambda p: (p.name, str(p)))  # whatever order they come in
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if only is not None:
        written = []
        for f in build_figures(run_dirs, venue=venue, column=column, only=only, scorers=scorers):
            written += save_all(f.figure, out / f.name, f.style)
        return written
    clear_outputs(out)
    left = dict(sorted((left_out or {}).items()))
    manifest = _Manifest(out, command, run_dirs, left)
    written: list[Path] = []
    main_notes: list[str] = []
    appx_notes: list[str] = []
    made = build_figures(run_dirs, venue=venue, column=column, scorers=scorers)
    planted_words = _planted_words(made, main_only)  # said of the whole set, its appendix too
    figures = [f for f in made if not (main_only and f.appendix)]
    alike = Counter((f.what, tuple(f.datasets)) for f in figures)  # a dataset's scores over two figures
    for f in figures:
        paths = save_all(f.figure, out / f.name, f.style)
        for stem, rows in f.tables.items():  # the numbers its message quotes that no run table holds
            table = _write_csv(out / f"{stem}.csv", rows)
            manifest.add([table], f.inputs, f"the numbers the caption of {f.name} quotes")
            written.append(table)
        about: dict[str, Any] = {"appendix": f.appendix, "datasets": f.datasets, "scorers": f.scorers}
        manifest.add(
            paths, f.inputs, f.what, **about, **({"message": f.message, **f.message.parts()} if f.message else {})
        )
        written += paths
        if f.appendix:
            scores = (
                f"; scores: {', '.join(dict.fromkeys(f.scorers.values()))}"
                if alike[(f.what, tuple(f.datasets))] > 1
                else ""
            )
            named = "; ".join(dict.fromkeys("{}, {}".format(*dataset_label(d)) for d in f.datasets))
            appx_notes.append(f"- `{f.name}`: {f.what}{scores} ({named})")
            appx_notes += _appendix_caption(f.message)
            continue
        number = sum(line.startswith("### ") for line in main_notes) + 1
        datasets = "; ".join("{} ({})".format(*dataset_label(d)) for d in f.datasets)
        caption, also = f.message.answer, f.message.also
        main_notes += [
            f"### {number}. {f.what[:1].upper()}{f.what[1:]}?",
            "",
            f"![{f.what}]({f.name}.png)",
            "",
            f"*{caption}*",
            "",
            *(["Also in the figure:", *(f"- {a}" for a in also), ""] if also else []),
            f"Datasets: {datasets}.",
            "",
        ]
    models = _models_words(
        [r for r in run_dirs if r.name in {d for f in figures if not f.appendix for d in f.datasets}]
    )
    tables = [] if main_only else _tables(run_dirs, out)
    table_notes = []
    for paths, inputs, what in tables:
        if paths:
            manifest.add(paths, inputs, what)
            written += paths
            table_notes.append(f"- {', '.join(f'`{p.name}`' for p in paths)}: {what}")
    head = [
        "# Paper figures",
        "",
        f"Made by `{command or 'construct_eval.paper.figure_set.paper_figures'}` from the stored tables of:",
        *(f"- `{r}`" for r in run_dirs),
        "",
        *(
            ["Left out (evaluated, but not in this set):", *(f"- `{name}`: {why}" for name, why in left.items()), ""]
            if left
            else []
        ),
        f"Venue `{venue}`, `{column}` width; PDF and SVG (TrueType fonts), PNG at {PNG_DPI} dpi. `manifest.json`",
        "maps each file to what it shows, its message, its datasets, the scores it draws (internal name -> label)",
        "and the run files (with their hashes) it was made from. `construct-eval figures --only NAME` remakes one",
        "figure (`--scorers` draws the scorers named).",
        "",
        "## Main figures",
        "",
        f"{_count(len([f for f in figures if not f.appendix]))}, one for each of the paper's questions, each with every dataset",
        "that can answer it (at one column's width, as many as fit a page). Each caption is the figure's message,",
        'computed from the numbers it draws, and "Also in the figure" what else a reader sees in it: a score is said to do',
        "better than another only where their 95% intervals are apart, or, where the two rated different items,",
        "where their paired difference on the items both rated excludes 0 (the figure's common-items table; the",
        "other paired tests are in each run's tables).",
        *(["", *planted_words] if planted_words else []),
        "",
        *main_notes,
        "## How to read them",
        "",
        *([models, ""] if models else []),
        f"A main detection or review figure draws at most {MAX_SERIES} scores (the judge's written rating, forced and",
        "free, its expected rating and P(correct), the generator's token log-probs, the plausibility checks and",
        f"the field prior, in that priority), only the rows (dataset, level, score) with at least {fd.MIN_CLASS} wrong and",
        f"{fd.MIN_CLASS} right items, at least {fd.MIN_CLASS} documents with a wrong and {fd.MIN_CLASS} with a right item (the bootstrap",
        "resamples documents) and an interval, and only the datasets where at least half its rows are drawn; a",
        'spare cell of its grid holds the legend. "too few: appendix": the score ran there on too few items;',
        '"not run": it was not asked there; "no generator": the generator\'s own scores on planted errors, whose',
        "outputs no generator wrote. The CONSTRUCT figure draws every method on the items all of them",
        "scored, hollow where underpowered: it is the paper's question whatever the power. The appendix figures",
        'hold everything else: every score on every dataset ("too few to judge" marks a dataset with no',
        "powered row), fields pooled and within filled and empty fields, per planted error kind, other prompt",
        "orders, combinations, other forms of a score, AUPRC, the review of fields, reliability diagrams.",
        'A row\'s own n ("n=200, 67 wrong") is written under it where the score ran on other items than its',
        "panel's title counts (a part of the set, or more of it). \"judge rating (JSON schema)\": the paper's per-field",
        'judge, every field rated in one call as a JSON object, an explanation then a rating each; "CONSTRUCT with the',
        "generator's samples\": the authors' self-reflection with TLM's observed consistency over the generator's samples",
        'and its token probability added. "offline rebuild": the data-table dataset rebuilt from public CSV files (its',
        "rows are not the benchmark's); \"benchmark prompt\": the generator was given the benchmark's extraction",
        "instruction (in this package's words), \"package prompt\": this package's own. In a review figure the",
        "curves and their markers sit at the budgets (5, 10, 20 or 30% reviewed); the intervals of one budget are set apart",
        "sideways, by up to 2 points, so close ones stay apart; they are all at that budget. A ring, in its score's colour,",
        "marks the judge's score that finds the most at 20% reviewed: the caption's \"judge's best\" there (the",
        "detection figures' \"judge's best\" is the judge's score with the highest AUROC). A grey band around a",
        "perfect score's line is, in a review figure, the span of the perfect curves where its scores rate different",
        "items, and in the CONSTRUCT figure that line's 95% interval as the resampled items move it.",
        "A rating constant on a panel's items has no review curve (a note under the panel",
        'says so; in an AUROC panel it is a marker at 0.5 labelled "constant"), and a score that did not run there has no curve. Hollow markers (a dagger in the LaTeX tables):',
        "underpowered rows (as above, or an AUROC interval wider than 0.3); a double dagger (\u2021) in the CONSTRUCT",
        'figure: per output, the output\'s least field rating. "2 values" (or "1 value"): a',
        "rating with fewer than 3 values holding 5% of the items each, a threshold rather than a scale",
        '("mostly 2 values": a few items hold other values);',
        '"96% one value": one value holds that share of the items (no other holds 5%), so the rating barely',
        'orders them; "constant": one value, no ranking. An interval narrower than its marker (a score on',
        "thousands of items) is hidden behind it. An AUROC below 0.5: the score rates wrong items as",
        "more trustworthy than right ones. Grey: baselines that use the labels. Fields are top-level fields, or",
        "leaves where a dataset's panel says so (the granularity the judge rated; without a judge's field",
        "ratings, the one with more items of the smaller class).",
        "Scores: *judge rating* is the LLM judge's 1-10 rating (*forced*: the rating alone; *free*: the card's",
        "recipe, an explanation first); *expected rating* the rating weighted by its tokens' probabilities;",
        "*P(correct)* the judge's yes/no verdict read from its log-probs; *token log-probs* the generator's own;",
        "*self-consistency* the agreement of samples at temperature 1 with the output; *reflection ensemble* a",
        "judge that reflects on the output from four angles (this package's prompts); *CONSTRUCT* the paper's method",
        "as its authors' open-source code computes it (Cleanlab's Trustworthy Language Model, TLM, `trustworthy-llm`",
        "0.0.3); *Cleanlab TLM (imported scores)* TLM scores computed elsewhere and imported; *plausibility",
        "checks* label-free checks of each value against the document and its type; *field prior* each field's",
        "error rate in the other documents. Financial NER: financial named-entity recognition, entities extracted from",
        "financial sentences (the benchmark's FiRE set). In the meaning figure a fitted map is read at each value as the mean of its",
        "items' out-of-fold readings (each item read by the map fitted without its fold): each fold's isotonic map",
        "is decreasing, but their mean at a value, over the folds its items fell in, need not be.",
        "A review panel's light solid line is a perfect score: where many items are wrong, even it finds only part",
        "of them at a small budget; where a panel's scores rate different items, each has its own perfect curve and",
        f"a light band spans them. A review panel is left out where a perfect score could find less than {MIN_HEADROOM:.0%}",
        "more of the wrong items than random order at the largest budget (nearly every item wrong: every curve",
        'lies on the random line). In the planted-kind figure, "on k of m" beside a score: it was asked on k of',
        "the row's m wrong fields (it ran on a part of the set).",
        "",
        "## Appendix figures",
        "",
        *(appx_notes or ["None in this set."]),
        "",
        *(
            [
                "## Tables",
                "",
                "Bold in an AUROC table: the best powered, label-free score of a column, only where its interval is",
                "above 0.5 and its paired difference from the runner-up (the next label-free score on the same items)",
                "excludes zero after Holm correction (`best` in the CSV; the CSV gives the difference). Scores are",
                "named as the figures name them; on flat schemas (every field top-level) per leaf and per top field",
                "are one row. The LaTeX tables need `\\usepackage{booktabs,array}`; a detection table holds at most",
                f"{ft.MAX_TABLE_COLUMNS} datasets (planted errors first) and continues in `_2`, `_3`; its CSV holds every dataset.",
                "",
                *table_notes,
            ]
            if table_notes
            else []
        ),
    ]
    (out / "figures.md").write_text("\n".join(head).rstrip("\n") + "\n")
    manifest.write()
    return written


def figures_command(
    runs: Sequence[str | Path] | None,
    runs_root: str | Path | None,
    left_out_file: str | Path | None,
    out: str | Path,
    *,
    only: str | None = None,
    main_only: bool = False,
    scorers: str | None = None,
    **drawing: Any,
) -> str:
    """What ``construct-eval figures`` does: :func:`paper_figures` on ``runs``, or on the paper set
    under ``runs_root`` less the runs ``left_out_file`` names; ``scorers`` a comma list. Returns the
    line saying what was written; options that cannot work together, or an ``only`` that names no
    figure of the set, raise ``ValueError``."""
    if left_out_file and not runs_root:
        raise ValueError("--left-out names runs to leave out of --runs-root; with --runs, list only the runs wanted")
    if only and main_only:
        raise ValueError("--only makes one figure; --main-only a set: give one of them")
    left_out = read_left_out(left_out_file) if left_out_file else {}
    chosen = runs or (paper_set(runs_root, left_out) if runs_root else [])
    if not chosen:
        raise ValueError(f"no evaluated run (metrics/detection.csv) under {runs_root}")
    names = [s for s in (scorers or "").split(",") if s.strip()] or None
    written = paper_figures(chosen, out, main_only=main_only, left_out=left_out, only=only, scorers=names, **drawing)
    if only:
        return f"{only} as PDF, SVG and PNG in {out} (no manifest: --only writes the figure alone)"
    figures = sum(p.suffix == ".png" for p in written)
    return f"{len(written)} files ({figures} figures as PDF, SVG and PNG) in {out}; see figures.md"
