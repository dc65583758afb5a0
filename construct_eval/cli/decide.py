"""``construct-eval decide``: an auto-accept threshold with a risk guarantee for one scorer of a run.

Thin over :func:`construct_eval.decide.report.decide`; errors are raised and mapped to their
message and exit code by :mod:`construct_eval.cli.exits`, as every command's. It prints the
answer (a threshold, its coverage and bound, or "no threshold meets alpha at this n" with the n
it would need), the guarantee it carries and the scorer's AURC; ``--out`` also saves the report's table and figure,
``--save`` the fitted :class:`~construct_eval.decide.policy.Policy`. ``review`` applies a saved
policy to new outputs.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def fraction(text: str) -> float:
    """An argparse ``type``: a number strictly between 0 and 1 (``--alpha``, ``--delta``)."""
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


def cmd_decide(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.decide.report import decide

    report = decide(  # a bad run or scorer raises; cli.exits maps it to its message and exit 2
        args.run,
        args.scorer,
        alpha=args.alpha,
        delta=args.delta,
        level=args.level,
        n_boot=args.n_boot,
        field_test=args.field_test,
    )
    print(report.text())
    if args.save:
        from construct_eval.decide.policy import Policy

        policy = Policy.fit(args.run, args.scorer, alpha=args.alpha, delta=args.delta, level=args.level,
                            field_test=args.field_test)  # fmt: skip
        print(f"wrote {policy.save(args.save)} ({policy.calibration['method']} calibration; {policy.guarantee})")
    if args.out:
        for path in report.save(Path(args.out)):
            print(f"wrote {path}")
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    from construct_eval.cli.common import client_from
    from construct_eval.data.runs import RunDir
    from construct_eval.decide.policy import Policy, read_labels
    from construct_eval.decide.report import label_lines

    # a PolicyError (a ValueError) names the file, field and difference; cli.exits maps it to exit 2
    policy = Policy.load(args.policy)
    run = RunDir(args.run, create=False)
    client = client_from(args) if args.base_url and policy.calls_a_model else None  # CONSTRUCT, where it has no rows
    for line in policy.complete_scores(run, client=client, data_dir=args.data_dir):
        print(line)
    applied = policy.review_run(run, new_fields=args.new_fields, n_perm=args.n_perm)
    checked = policy.check(applied, read_labels(args.labels, applied.decisions)) if args.labels else None
    print(applied.text())
    if checked is not None:
        applied.summary["labels"] = checked
        for line in label_lines(checked, policy.alpha):
            print(line)
            applied.summary["lines"].append(line)
    for path in applied.save(Path(args.out) if args.out else run.path / "review"):
        print(f"wrote {path}")
    return 0
