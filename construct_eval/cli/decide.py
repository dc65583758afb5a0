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
from typing import Any


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
    from construct_eval.data.runs import RunDir
    from construct_eval.decide.policy import Policy, read_labels
    from construct_eval.decide.report import label_lines

    # a PolicyError (a ValueError) names the file, field and difference; cli.exits maps it to exit 2
    policy = Policy.load(args.policy)
    run = RunDir(args.run, create=False)
    if policy.scorer_config.get("family") in ("construct", "construct-gen"):
        _score_missing(policy, run, args)
    if policy.scorer_config.get("family") == "plausibility" and not run.file("plausibility").exists():
        from construct_eval.scorers.plausibility import plausibility_run

        scored = plausibility_run(run, data_dir=args.data_dir)  # label-free: documents and outputs alone
        print(f"plausibility checks written for {scored} outputs (the run had none; no labels needed)")
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


def _score_missing(policy: Any, run: Any, args: argparse.Namespace) -> None:
    """CONSTRUCT scores for outputs that have none yet, with the policy's preset (resumable)."""
    from construct_eval.cli.common import client_from
    from construct_eval.scorers.construct import construct_run

    if not args.base_url:
        return  # no endpoint given: the run's own construct rows are used as they are
    settings = policy.scorer_config.get("settings") or {}
    report = construct_run(
        run,
        client_from(args),
        preset=settings.get("preset", "medium"),
        reasoning_effort=settings.get("reasoning_effort"),
        data_dir=args.data_dir,
        progress=False,
    )
    print(f"CONSTRUCT: {report.written} call(s) made for outputs not yet scored")
