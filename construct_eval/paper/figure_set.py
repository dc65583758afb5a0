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
from construct_eval.paper.captions import Caption, document, macro
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


def _planted_facts(figures: Sequence[Any], main_only: bool = False) -> dict[str, Any] | None:
    """Which main figures draw only a generator's errors and where their planted-error panels are
    (the appendix figures ending ``_planted``; ``main_only``: a set without its appendix, which the
    full set holds), and which other main figures draw planted errors too; None where no such
    appendix figure was made."""
    planted = [f.name for f in figures if f.appendix and f.name.endswith(PLANTED)]
    if not planted:
        return None
    mains = [n.removeprefix("appx_").removesuffix(PLANTED) for n in planted]
    resting = [f.name for f in figures if not f.appendix and f.name not in mains
               and not all(fd.generators_errors(d) for d in f.datasets)]  # fmt: skip
    return {"mains": mains, "appendix": planted, "resting": resting, "main_only": main_only}


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
    parts = []
    for part in ("judge", "construct", "generator"):
        models = found.get(part, {})
        everywhere = len(models) == 1 and part == "judge" and len(next(iter(models.values()))) == len(run_dirs)
        if models:
            parts.append({"part": part, "everywhere": next(iter(models)) if everywhere else "",
                          "models": [(m, list(dict.fromkeys(w))) for m, w in models.items()]})  # fmt: skip
    return macro("_figures_md", "models", parts)


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
    mains: list[dict[str, Any]] = []
    appendix: list[dict[str, Any]] = []
    made = build_figures(run_dirs, venue=venue, column=column, scorers=scorers)
    planted = _planted_facts(made, main_only)  # said of the whole set, its appendix too
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
        if f.appendix:  # its message, where it has one (a main figure's planted-error panels), under its line
            scores = list(dict.fromkeys(f.scorers.values())) if alike[(f.what, tuple(f.datasets))] > 1 else []
            named = "; ".join(dict.fromkeys("{}, {}".format(*dataset_label(d)) for d in f.datasets))
            message = f.message or Caption("")
            appendix.append({"name": f.name, "what": f.what, "scores": scores, "datasets": named,
                             "answer": message.answer, "also": message.also})  # fmt: skip
            continue
        datasets = "; ".join("{} ({})".format(*dataset_label(d)) for d in f.datasets)
        mains.append({"name": f.name, "what": f.what, "caption": f.message.answer, "also": f.message.also,
                      "datasets": datasets})  # fmt: skip
    models = _models_words(
        [r for r in run_dirs if r.name in {d for f in figures if not f.appendix for d in f.datasets}]
    )
    tables = [] if main_only else _tables(run_dirs, out)
    table_notes = []
    for paths, inputs, what in tables:
        if paths:
            manifest.add(paths, inputs, what)
            written += paths
            table_notes.append(([p.name for p in paths], what))
    text = document(
        "_figures", command=command or "construct_eval.paper.figure_set.paper_figures", runs=run_dirs, left=left,
        venue=venue, column=column, png_dpi=PNG_DPI, mains=mains, planted=planted, models=models,
        max_series=MAX_SERIES, min_class=fd.MIN_CLASS, min_headroom=f"{MIN_HEADROOM:.0%}", appendix=appendix,
        tables=table_notes, max_table_columns=ft.MAX_TABLE_COLUMNS,
    )  # fmt: skip
    (out / "figures.md").write_text(text.rstrip("\n") + "\n")
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
        return macro("_figures_md", "written_one", only, out)
    return macro("_figures_md", "written_set", len(written), sum(p.suffix == ".png" for p in written), out)
