"""Commands that look after what a run stands on: ``cache`` (where the response cache is, its
integrity, emptying it) and ``repair`` (moving a run file's unreadable lines aside)."""

from __future__ import annotations

import argparse
from pathlib import Path

from construct_eval.data.repair import repair_run
from construct_eval.data.runs import RunDir
from construct_eval.llm.cache import ResponseCache, check_cache, default_cache_path


def cmd_cache(args: argparse.Namespace) -> int:
    path = Path(args.cache) if args.cache else default_cache_path()
    if args.check:
        found = check_cache(path)
        print("\n".join(found.lines()))
        return 0 if found.ok or not found.exists else 1
    if not path.exists():
        print(f"no response cache at {path}")
        return 0
    cache = ResponseCache(path)  # opening it also tightens its file modes, and sets a damaged one aside
    try:
        if args.clear:
            n = cache.clear()
            print(f"cleared {n} cached replies from {path}")
        else:
            size = sum(f.stat().st_size for f in (Path(f"{path}{s}") for s in ("", "-wal", "-shm")) if f.exists())
            print(f"{path}: {len(cache)} cached replies, {size / 1e6:.1f} MB (owner-only: mode 0600, folder 0700)")
            print("it holds every prompt's reply keyed by a hash of the prompt; clear it with --clear")
    finally:
        cache.close()
    return 0


def cmd_repair(args: argparse.Namespace) -> int:
    report = repair_run(RunDir(args.run, create=False), dry_run=args.dry_run)
    print("\n".join(report.lines()))
    return 0
