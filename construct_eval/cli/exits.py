"""How a command ends: the one mapping from the library's errors to a message and an exit code.

Commands raise; nothing else in ``cli/`` prints an error or picks an exit code.

- 0: done.
- 2: the command could not do what was asked: bad options or input, a run folder or dataset that
  does not hold what it needs, an endpoint that refuses every call, a provider's API error, a
  stage that failed (its message says what was written is kept and that a rerun resumes).
- 3: stopped at a spending limit: not an error, a rerun with a larger one goes on.
- 75: refused because another process writes to the run folder (:data:`LOCKED`; ``--wait`` waits).
- 2 is also argparse's code for options it cannot parse; 130 an interrupt (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

FAILED = 2
STOPPED = 3
LOCKED = 75  # construct_eval.runlock.EXIT_LOCKED: sysexits.h's EX_TEMPFAIL, try again later


class UsageError(ValueError):
    """Options that cannot work together (``--max-cost`` without prices, no endpoint given)."""


def _failures() -> tuple[type[BaseException], ...]:
    import openai

    from construct_eval.llm.cache import CacheError
    from construct_eval.llm.client import EndpointError
    from construct_eval.llm.engine import StageError, StageFailed

    # ValueError covers the package's input errors (RunError, DatasetError, ExternalScoreError,
    # UsageError, a JSON file that does not parse); OSError a file that cannot be read
    return (ValueError, OSError, StageError, StageFailed, EndpointError, CacheError, openai.APIError)


def run_command(func: Callable[[argparse.Namespace], int | None], args: argparse.Namespace) -> int:
    """``func(args)``'s exit code, or the code of the error it raised (its message on stderr)."""
    from construct_eval.llm.budget import BudgetReached
    from construct_eval.llm.engine import StageStopped

    try:
        return int(func(args) or 0)
    except StageStopped as exc:
        print(str(exc), file=sys.stderr)
        return STOPPED
    except BudgetReached as exc:
        print(f"stopped at the spending limit: {exc}", file=sys.stderr)
        return STOPPED
    except _failures() as exc:
        print(f"error: {exc}", file=sys.stderr)
        return FAILED
