"""Commands that look after what a run stands on: ``cache`` (where the response cache is, its
integrity, emptying it) and ``repair`` (moving a run file's unreadable lines aside)."""

from __future__ import annotations

import argparse
from pathlib import Path

from construct_eval.data.repair import repair_run
from construct_eval.data.runs import RunDir
from construct_eval.llm.cache import ResponseCache, check_cache, default_cache_path


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register ``cache`` and ``repair`` on the top-level parser."""
    p = sub.add_parser("cache", help="where the response cache is, how big; --check its integrity, --clear empties it")
    p.add_argument("--cache", default=None, help=f"cache file (default {default_cache_path()})")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--clear", action="store_true", help="delete every cached reply")
    what.add_argument(
        "--check", action="store_true", help="SQLite's integrity check, read-only; exit 1 if the cache is damaged"
    )
    p.set_defaults(func=cmd_cache)

    p = sub.add_parser(
        "repair", help="move a run's unreadable JSONL lines to side files (never deleted); the run then resumes"
    )
    p.add_argument("--run", required=True)
    p.add_argument("--dry-run", action="store_true", help="only report what would be moved")
    p.set_defaults(func=cmd_repair)


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
