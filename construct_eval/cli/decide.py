"""``construct-eval decide``: an auto-accept threshold with a risk guarantee for one scorer of a run.

Thin over :func:`construct_eval.decide.report.decide`: prints the answer (a threshold, its
coverage and bound, or "no threshold meets alpha at this n" with the n it would need), the
guarantee it carries and the scorer's AURC; ``--out`` also saves the report's table and figure.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from construct_eval.data.runs import RunError


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


def add_cli(sub: Any) -> None:
    """Register the ``decide`` command on the CLI's subparsers."""
    p = sub.add_parser("decide", help="auto-accept threshold with a risk guarantee (Learn-then-Test) for one scorer")
    p.add_argument("--run", required=True, help="a labelled run folder")
    p.add_argument("--scorer", required=True, help="scorer name as in the detection table, e.g. judge-doc")
    p.add_argument("--alpha", type=_fraction, default=0.05, help="target risk: share of auto-accepted items wrong")
    p.add_argument("--delta", type=_fraction, default=0.1, help="the guarantee holds with probability 1 - delta")
    p.add_argument("--level", default=None, choices=["document", "field"], help="default: the scorer's own level")
    p.add_argument(
        "--field-test",
        default="wsr",
        choices=["wsr", "hb"],
        help="field level: betting (WSR) or Hoeffding-Bentkus p-value of the per-document loss",
    )
    p.add_argument("--n-boot", type=int, default=1000, help="document-bootstrap resamples for the AURC interval")
    p.add_argument("--out", help="folder for the report's table and figure (default: print only)")
    p.set_defaults(func=cmd_decide)


def cmd_decide(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.decide.report import decide

    try:
        report = decide(
            args.run,
            args.scorer,
            alpha=args.alpha,
            delta=args.delta,
            level=args.level,
            n_boot=args.n_boot,
            field_test=args.field_test,
        )
    except (RunError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.text())
    if args.out:
        for path in report.save(Path(args.out)):
            print(f"wrote {path}")
    return 0
