"""Commands that analyse recorded runs: evaluate, calibrate, compare, paired, figures,
and summary."""

from __future__ import annotations

import argparse
from pathlib import Path

from construct_eval.cli.common import index_figures, print_report
from construct_eval.data.runs import RunDir


def cmd_evaluate(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.reports.run_analyses import evaluate_run

    run = RunDir(args.run, create=False)
    report = evaluate_run(
        run, Path(args.out) if args.out else None, n_boot=args.n_boot, seed=args.seed, figures=args.figures,
        intervals=args.intervals,
    )  # fmt: skip
    index_figures(args, run, report.out_dir or run.path, report.figures)
    return print_report(report)


def cmd_calibrate(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.reports.run_analyses import calibrate_run

    run = RunDir(args.run, create=False)
    out = Path(args.out) if args.out else None
    report = calibrate_run(run, out, methods=tuple(args.methods.split(",")), seed=args.seed, figures=args.figures)
    index_figures(args, run, out or run.path, report.figures)
    return print_report(report)


def cmd_summary(args: argparse.Namespace) -> int:
    from construct_eval.reports.judgment_counts import judgment_counts

    return print_report(judgment_counts(RunDir(args.run, create=False)))


def cmd_compare(args: argparse.Namespace) -> int:
    from construct_eval.reports.run_tables import compare_runs

    return print_report(compare_runs(args.runs, out=Path(args.out) if args.out else None, n_boot=args.n_boot))


def cmd_paired(args: argparse.Namespace) -> int:
    from construct_eval.reports.run_tables import paired_run

    report = paired_run(
        RunDir(args.run, create=False),
        args.reference,
        level=args.level,
        scorers=args.scorers,
        by_output_kind=args.by_output_kind,
        out_dir=Path(args.out) if args.out else None,
        n_boot=args.n_boot,
        seed=args.seed,
        intervals=args.intervals,
    )
    return print_report(report)


def cmd_paper_comparison(args: argparse.Namespace) -> int:
    from construct_eval.reports.run_tables import paper_comparison_report

    report = paper_comparison_report(
        RunDir(args.run, create=False), out_dir=Path(args.out) if args.out else None, n_boot=args.n_boot, seed=args.seed
    )
    return print_report(report)


def cmd_figures(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.paper.figure_set import figures_command

    command = args.invocation if args.command_line is None else args.command_line
    print(figures_command(args.runs, args.runs_root, args.left_out, args.out, only=args.only, main_only=args.main_only,
                          scorers=args.scorers, venue=args.venue, column=args.column, command=command))  # fmt: skip
    return 0


def cmd_cost(args: argparse.Namespace) -> int:
    from construct_eval.reports.run_tables import cost_report

    report = cost_report(RunDir(args.run, create=False), price_in=args.price_in, price_out=args.price_out)
    return print_report(report)
