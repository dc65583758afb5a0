"""Tables made on demand from recorded runs, written under ``metrics/`` and returned with the
lines the CLI prints: each scorer against a reference (``paired``), judges side by side
(``compare``) and a run's cost ledger (``cost``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.reports.tables import file_slug, markdown_table, paired_table, write_table


@dataclass
class TableReport:
    """A table's rows and columns, where it was written, and its markdown."""

    rows: list[dict[str, Any]]
    columns: list[str] | None
    written: list[Path] = field(default_factory=list)
    title: str | None = None

    def lines(self) -> list[str]:
        out = [markdown_table(self.rows, self.columns, title=self.title or "")]
        if self.written:
            out.append(f"written: {' and '.join(str(p) for p in self.written)}")
        return out


PAIRED_COLUMNS = ["level", "a", "b", "n", "auroc_a", "auroc_b", "difference", "low", "high", "p", "p_holm", "ranking"]


def paired_run(
    run: RunDir,
    reference: str,
    *,
    level: str = "document",
    scorers: Sequence[str] | None = None,
    by_output_kind: bool = False,
    out_dir: Path | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    intervals: str = "auto",
) -> TableReport:
    """Paired AUROC differences of each scorer against ``reference`` (Holm-corrected), written
    to ``metrics/paired_<level>_<reference>``; ``by_output_kind`` compares field-level scorers
    within the fields the output left null or empty and within the filled ones (one family)."""
    from construct_eval.reports.collect import collect
    from construct_eval.reports.output_kinds import output_kind_pairs
    from construct_eval.reports.run_analyses import with_output_kinds

    cols, name, within = PAIRED_COLUMNS, f"paired_{level}_{file_slug(reference)}", ""
    if by_output_kind:
        if level != "field":
            raise ValueError("--by-output-kind compares field-level scorers (use --level field)")
        items = collect(run)
        if not with_output_kinds(run, items):
            raise ValueError(f"{run.path}: its outputs cannot be rebuilt here (records missing), so no output kinds")
        rows = output_kind_pairs(items, reference, scorers=scorers, n_boot=n_boot, seed=seed)
        cols, name, within = ["fields", *cols], f"{name}_by_output_kind", ", within output kinds"
    else:
        rows = paired_table(
            collect(run), reference, level=level, scorers=scorers, n_boot=n_boot, seed=seed, intervals=intervals
        )
    for r in rows:  # the resamples a bootstrap p was counted over: its floor, 2 / (B + 1) (DeLong's has none)
        if "p" in r and r.get("intervals") != "delong":
            r["n_boot"] = n_boot
    out = (out_dir or run.path) / "metrics" / name
    title = f"Paired AUROC differences against {reference} ({level}{within}, {n_boot} document resamples)"
    write_table(rows, out, title, md_columns=cols)
    return TableReport(rows, cols, [out.with_suffix(".md")])


COMPARE_COLUMNS = [
    "run", "model", "mode", "variant", "constrained", "judgments", "s_per_call", "unscored_rate",
    "top_unscored_reason", "ratings", "modal_rating_share", "auroc_rating", "auroc_rating_low",
    "auroc_rating_high", "auroc_expected", "auroc_expected_low", "auroc_expected_high", "n_rating", "wrong_rating",
]  # fmt: skip


def compare_runs(runs: Sequence[str | Path], *, out: Path | None = None, n_boot: int = 1000) -> TableReport:
    """Judges side by side, one run folder per configuration: seconds per call, unscored rate,
    ratings used, AUROC; written to ``out``.csv and .md when given."""
    from construct_eval.reports.run_analyses import judge_overview

    rows: list[dict[str, Any]] = []
    for path in runs:
        rows += judge_overview(RunDir(path, create=False), n_boot=n_boot)
    report = TableReport(rows, COMPARE_COLUMNS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_table(rows, out, md_columns=COMPARE_COLUMNS)
        report.written = [out.with_suffix(".csv"), out.with_suffix(".md")]
    return report


def cost_report(run: RunDir, *, price_in: float | None = None, price_out: float | None = None) -> TableReport:
    """The run's cost ledger (calls, cached calls, tokens and money per source), written to
    ``metrics/cost``."""
    from construct_eval.reports.cost import cost_ledger

    rows = cost_ledger(run, price_in=price_in, price_out=price_out)
    title = f"What the model calls of {run.path.name} cost (tokens from the replies' usage)"
    write_table(rows, run.path / "metrics" / "cost", title)
    return TableReport(rows, None, title=title)


def paper_comparison_report(
    run: RunDir, *, out_dir: Path | None = None, n_boot: int = 2000, seed: int = 0
) -> TableReport:
    """The paper's four methods side by side on the items all of them scored, at both levels
    (:mod:`~construct_eval.reports.paper_comparison`), written to ``metrics/paper_comparison``:
    every number in the CSV, the reader's form in the Markdown."""
    from construct_eval.reports.collect import collect, elicitations
    from construct_eval.reports.paper_comparison import FORCED, display_rows, paper_comparison

    primary = (elicitations(run.iter_rows("judgments")) or [FORCED])[0]  # how the plain-named judge was asked
    rows = paper_comparison(collect(run), primary=primary, n_boot=n_boot, seed=seed)
    shown = display_rows(rows)
    out = (out_dir or run.path) / "metrics" / "paper_comparison"
    title = f"The paper's comparison on {run.path.name}: CONSTRUCT (the authors' TLM 0.0.3) against its baselines"
    write_table(rows, out, title)
    families = Counter(v for r in rows for k, v in r.items() if k.endswith("_holm_family"))
    notes = [
        "",
        "Each level's numbers are on the items every method of that level scored (the items column),",
        f"with 95% intervals from {n_boot:,} resamples of documents (seed {seed}), the same resamples for every",
        "method. Precision and recall: of the lowest-scored share of items, how many are wrong, and how many",
        "of the wrong items are among them (ties at the cut count as a random order would, on average).",
        "CONSTRUCT minus another row is paired on the same items and resamples; at one budget on the same",
        "items, precision is recall times a factor the methods share, so recall alone is tested.",
        "Holm's correction runs in two families fixed beforehand: the paper's claim, CONSTRUCT's AUROC against",
        f"its three baselines ({families['primary']} tests), and every other test of the table ({families['secondary']});",
        "a direction is claimed only where the interval excludes 0, the Holm p is below 0.05, each class has at",
        "least 10 items in at least 10 documents, and nearly every resample held both classes. A p-value is",
        "2 (k + 1) / (B + 1), k the resamples on the far side of 0 and B all of them, so it is never 0: with B",
        "resamples, Holm cannot go below a family's number of tests times 2 / (B + 1).",
    ]
    (out.with_suffix(".md")).write_text(markdown_table(shown, title=title) + "\n".join(notes) + "\n")
    return TableReport(shown, None, [out.with_suffix(".csv"), out.with_suffix(".md")], title=title)
