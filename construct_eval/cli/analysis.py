"""Commands that analyse recorded runs: evaluate, calibrate, compare, paired, figures,
and summary."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from construct_eval.cli.common import index_figures
from construct_eval.data.runs import RunDir, RunError
from construct_eval.judging.judge import MODES
from construct_eval.judging.reread import judgment_rows


def cmd_evaluate(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.analysis.reports import evaluate_run

    run = RunDir(args.run, create=False)
    try:
        report = evaluate_run(run, Path(args.out) if args.out else None, n_boot=args.n_boot, seed=args.seed)
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for row in report["rows"]:
        ci = f"[{row.get('auroc_low', float('nan')):.3f}, {row.get('auroc_high', float('nan')):.3f}]"
        print(
            f"{row['level']:8s} {row['scorer']:34s} n={row['n']:6d} prev={row['prevalence']:.3f}"
            f" AUROC={row['auroc']:.3f} {ci} unscored={row['unscored']}"
        )
    print(f"{report['unparsed']} outputs did not parse (wrong documents that no scorer saw)")
    out = Path(args.out) if args.out else run.path
    index_figures(args, run, out, report["figures"])
    print(f"tables: {out / 'metrics'}; figures: {len(report['figures'])} (see figures/index.md)")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.analysis.reports import calibrate_run

    run = RunDir(args.run, create=False)
    methods = tuple(args.methods.split(","))
    try:
        report = calibrate_run(run, Path(args.out) if args.out else None, methods=methods, seed=args.seed)
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for row in report["rows"]:
        if "brier" not in row:  # a constant score, or one with 2-3 values: read per value, not fitted
            print(f"{row['level']:8s} {row['scorer']:34s} {row['method']}")
            continue
        print(
            f"{row['level']:8s} {row['scorer']:34s} {row['method']:16s} brier={row['brier']:.4f}"
            f" ece={row['ece_width']:.4f} ece_mass={row['ece_mass']:.4f} debiased={row['ece_debiased']:.4f}"
        )
    if not report["rows"]:
        print("nothing to calibrate: each scorer needs >= 10 labelled items with both classes")
    index_figures(args, run, Path(args.out) if getattr(args, "out", None) else run.path, report["figures"])
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    run = RunDir(args.run, create=False)
    rows = list(judgment_rows(run))
    by_mode: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    ratings: Counter[tuple[str, int]] = Counter()
    for r in rows:
        by_mode[(r["mode"], r["status"])] += 1
        if r["status"] != "ok":
            reasons[r["reason"]] += 1
        else:
            ratings[(r["mode"], r["rating"])] += 1
    print(f"{len(rows)} judgments in {run.file('judgments')}")
    for mode in MODES:
        ok, un = by_mode[(mode, "ok")], by_mode[(mode, "unscored")]
        if ok + un:
            hist = " ".join(f"{v}:{ratings[(mode, v)]}" for v in range(1, 11) if ratings[(mode, v)])
            print(f"  {mode:13s} scored {ok:6d}  unscored {un:6d} ({un / (ok + un):.1%})  ratings {hist}")
    for reason, n in reasons.most_common():
        print(f"  unscored {reason}: {n}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from construct_eval.analysis.reports import judge_overview
    from construct_eval.analysis.tables import markdown_table, write_table

    rows = []
    for path in args.runs:
        try:
            rows += judge_overview(RunDir(path, create=False), n_boot=args.n_boot)
        except (RunError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    columns = [
        "run", "model", "mode", "variant", "constrained", "judgments", "s_per_call", "unscored_rate",
        "top_unscored_reason", "ratings", "modal_rating_share", "auroc_rating", "auroc_rating_low",
        "auroc_rating_high", "auroc_expected", "auroc_expected_low", "auroc_expected_high", "n_rating", "wrong_rating",
    ]  # fmt: skip
    print(markdown_table(rows, columns))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_table(rows, out, md_columns=columns)
        print(f"written: {out.with_suffix('.csv')} and {out.with_suffix('.md')}")
    return 0


def cmd_paired(args: argparse.Namespace) -> int:
    from construct_eval.analysis.collect import collect
    from construct_eval.analysis.output_kinds import output_kind_pairs
    from construct_eval.analysis.tables import _slug, markdown_table, paired_table, write_table

    run = RunDir(args.run, create=False)
    scorers = [s.strip() for s in args.scorers.split(",")] if args.scorers else None
    cols = ["level", "a", "b", "n", "auroc_a", "auroc_b", "difference", "low", "high", "p", "p_holm", "ranking"]
    name, within = f"paired_{args.level}_{_slug(args.reference)}", ""
    try:
        if args.by_output_kind:  # within null-or-empty fields and within filled ones, one Holm family
            if args.level != "field":
                raise ValueError("--by-output-kind compares field-level scorers (use --level field)")
            outputs = {r["id"]: r["output"] for r in run.outputs() if "output" in r}
            rows = output_kind_pairs(
                collect(run), outputs, args.reference, scorers=scorers, n_boot=args.n_boot, seed=args.seed
            )
            cols, name, within = ["fields", *cols], f"{name}_by_output_kind", ", within output kinds"
        else:
            rows = paired_table(
                collect(run), args.reference, level=args.level, scorers=scorers, n_boot=args.n_boot, seed=args.seed
            )
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(markdown_table(rows, cols))
    out = (Path(args.out) if args.out else run.path) / "metrics" / name
    title = (
        f"Paired AUROC differences against {args.reference} ({args.level}{within}, {args.n_boot} document resamples)"
    )
    write_table(rows, out, title, md_columns=cols)
    print(f"written: {out.with_suffix('.md')}")
    return 0


def cmd_figures(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.analysis.figures import paper_figures

    command = "construct-eval figures " + " ".join(sys.argv[2:]) if args.command_line is None else args.command_line
    try:
        written = paper_figures(args.runs, args.out, venue=args.venue, column=args.column, command=command)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(written)} files ({len(written) // 3} figures as PDF, SVG and PNG) in {args.out}; see figures.md")
    return 0


def cmd_cost(args: argparse.Namespace) -> int:
    from construct_eval.analysis.cost import cost_ledger
    from construct_eval.analysis.tables import markdown_table, write_table

    run = RunDir(args.run, create=False)
    try:
        rows = cost_ledger(run, price_in=args.price_in, price_out=args.price_out)
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    title = f"What the model calls of {run.path.name} cost (tokens from the replies' usage)"
    write_table(rows, run.path / "metrics" / "cost", title)
    print(markdown_table(rows, title=title))
    return 0
