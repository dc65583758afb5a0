"""Commands that look after what a run stands on: ``cache`` (where the response cache is, its
integrity, emptying it) and ``repair`` (moving a run file's unreadable lines aside)."""

from __future__ import annotations

import argparse
from pathlib import Path

from construct_eval.data.repair import repair_run
from construct_eval.data.runs import RunDir
from construct_eval.llm.cache import cache_lines, check_cache, default_cache_path


def cmd_cache(args: argparse.Namespace) -> int:
    path = Path(args.cache) if args.cache else default_cache_path()
    if args.check:
        found = check_cache(path)
        print("\n".join(found.lines()))
        return 0 if found.ok or not found.exists else 1
    print("\n".join(cache_lines(path, clear=args.clear)))
    return 0


def cmd_repair(args: argparse.Namespace) -> int:
    report = repair_run(RunDir(args.run, create=False), dry_run=args.dry_run)
    print("\n".join(report.lines()))
    return 0
