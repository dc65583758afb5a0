"""What every command shares: endpoint and judge options, the client, dataset options, and
printing a library report's lines."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

from construct_eval.cli.exits import UsageError
from construct_eval.data.datasets import Dataset, load_dataset
from construct_eval.data.runs import RunDir
from construct_eval.kinds import judge_modes
from construct_eval.llm.client import Endpoint, LLMClient, default_cache_path, make_client
from construct_eval.scorer_registry import checked
from construct_eval.types import ScorerId


def parse_modes(text: str) -> list[str]:
    try:
        return [m.value for m in judge_modes(text)]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class Option(NamedTuple):
    """One option as ``ArgumentParser.add_argument`` takes it: its flags and settings."""

    flags: tuple[str, ...]
    settings: dict[str, Any]


class OneOf(NamedTuple):
    """Options of which at most one may be given (``required``: exactly one)."""

    options: tuple[Option, ...]
    required: bool = False


class Writes(StrEnum):
    """What a command writes, which decides whether it holds the run's lock (one writer per run
    folder; ``--wait``) and which folder's ``provenance.jsonl`` records it."""

    NEW_RUN = "new run"
    """Makes or completes a run folder (``--out`` where the command has one, else ``--run``): the
    folder is made, locked and records the command."""
    RUN = "run"
    """Writes the run's files under its lock (``bias`` only when it scores, with ``--base-url``)."""
    TABLES = "tables"
    """Reads the run and writes tables and figures to metrics/ and figures/ of ``--out`` or the run,
    which records the command; no lock: it keeps working on what is complete while a writer runs."""
    READS = "reads"
    """Reads the run and writes elsewhere (a request file, printed lines); the run records the command; no lock."""
    NOTHING = "nothing"
    """Writes no run folder: no lock, no record."""


class Command(NamedTuple):
    """A command: its name, its line in ``--help``, what runs it, its options (an option, a group of
    which one may be given, or a function that adds a plugin's own to the parser), what it writes,
    or its subcommands."""

    name: str
    help: str
    run: Callable[[argparse.Namespace], int] | None
    options: list[Option | OneOf | Callable[[Any], None]]
    writes: Writes  # declared by every command: a forgotten one would take no lock and leave no record
    parts: tuple[Command, ...] = ()


def opt(*flags: str, **settings: Any) -> Option:
    return Option(flags, settings)


def add_options(p: Any, options: Iterable[Option | OneOf | Callable[[Any], None]]) -> None:
    """Put ``options`` on parser (or group) ``p``, in order."""
    for o in options:
        if isinstance(o, OneOf):
            add_options(p.add_mutually_exclusive_group(required=o.required), o.options)
        elif isinstance(o, Option):
            p.add_argument(*o.flags, **o.settings)
        else:
            o(p)


# The option groups commands share. Functions, not constants: defaults read from the environment
# (the endpoint, the cache's path) are read when the parser is built.
# fmt: off
def endpoint_opts() -> list[Option]:
    """Where a model is called and how."""
    env = os.environ.get
    return [
        opt("--base-url", default=env("CONSTRUCT_EVAL_BASE_URL"), help="OpenAI-compatible URL, e.g. http://127.0.0.1:8080/v1"),
        opt("--model", default=env("CONSTRUCT_EVAL_MODEL"), help="model name the endpoint knows"),
        opt("--backend", default="auto", choices=["auto", "openai", "llamacpp", "generic"]),
        opt("--api-key-env", default="OPENAI_API_KEY",
            help="name of the environment variable holding the key (never pass the key itself)"),
        opt("--endpoint-id", default=None,
            help="a name for the endpoint that resume and cache keys use instead of its URL (for a URL that changes:"
            " a tunnel, a new vLLM pod); the embedded server reports its own"),
        opt("--concurrency", type=int, default=None, help="calls in flight, per replica (default: the server's slots"
            " where it reports them, 1 on the embedded server, else 4)"),
        opt("--replicas", default=None,
            help="more base URLs serving the same model, comma list or @file (one per line): a fleet"),
        opt("--replica-routing", choices=["affinity", "least-loaded"], default="affinity",
            help="with --replicas: a document's calls on one replica (its prompt cache), or each call to the least loaded"),
        opt("--adaptive-concurrency", action="store_true",
            help="start at --concurrency, then follow the endpoint's 429s and x-ratelimit headers (hosted APIs)"),
        opt("--timeout", type=float, default=None,
            help="seconds per request attempt (default 120; 1800 for llama.cpp, where a slow CPU reply is no failure"
            " and a retry would queue a second generation behind the first)"),
        opt("--max-retries", type=int, default=4),
        opt("--cache", default=None, help=f"response cache file (default {default_cache_path()})"),
        opt("--no-cache", action="store_true"),
    ]


PRICE_OPTS = [
    opt("--price-in", type=float, default=None, help="price per million input tokens"),
    opt("--price-out", type=float, default=None, help="price per million output tokens"),
]


def spend_opts() -> list[Option]:
    """What a stage may spend and how it calls: dry run, prices, a limit, the Batch API."""
    return [
        opt("--dry-run", action="store_true", help="print the calls still to make, their tokens and cost; call nothing"),
        *PRICE_OPTS,
        opt("--discount", type=float, default=0.0, help="dry run: price discount, e.g. 0.5 for batch prices"),
        opt("--max-cost", type=float, default=None,
            help="stop before a call could take the run over this spend (needs --price-in and --price-out); exit 3"),
        opt("--batch", action="store_true", help="through the provider's Batch API: submit, poll, import"),
        opt("--batch-poll", type=float, default=30.0, help="batch: seconds between polls"),
    ]


RUN = opt("--run", required=True)
DATA_DIR = opt("--data-dir")
BENCHMARK_COPY = opt("--data-dir", help="local copy of the benchmark, for runs that refer to documents by id")
LIMIT = opt("--limit", type=int, default=None, help="only the first N documents")
QUIET = opt("--quiet", action="store_true", help="no progress bar")


def stage_opts() -> list[Option]:
    """Which documents a model-calling stage takes, quietly or not, what it may spend, and where it calls."""
    return [BENCHMARK_COPY, LIMIT, opt("--ids", default=None, help="only these documents (comma list of ids)"), QUIET,
            *spend_opts(), *endpoint_opts()]


def judge_opts() -> list[Option]:
    """How the judge is asked and where: shared by ``score``, ``bias`` (which scores) and ``batch``."""
    return [
        opt("--granularity", default="top", choices=["top", "item", "leaf"]),
        opt("--constrained", default="auto", choices=["auto", "none", "grammar", "json"]),
        opt("--max-tokens", type=int, default=512),
        opt("--no-logprobs", action="store_true", help="do not ask for log-probs"),
        opt("--explanation-cap", type=int, default=None,
            help="grammar only: at most N explanation characters (recorded as grammar:capN; 0 = the rating alone)"),
        *stage_opts(),
        opt("--batch-fallback", choices=["none", "live"], default="none", help="batch: make failed lines as live calls"),
    ]


DATASET_OPTS = [
    opt("--dataset", required=True,
        help="insurance_claims, pii, financial_ner, data_table_analysis, synthetic, data_table_rebuild (offline,"
        " not the benchmark's rows), or a CSV/JSONL file"),
    opt("--data-dir", help="local copy of the benchmark (default: download from Hugging Face)"),
    opt("--schema", help="JSON schema file (for a dataset file)"),
    opt("--input-col", default="text"),
    opt("--truth-col", default="ground_truth"),
    opt("--id-col", default=None),
    opt("--n", type=int, default=40, help="synthetic, data_table_rebuild: number of documents"),
    opt("--seed", type=int, default=0, help="synthetic content and --sample selection"),
    opt("--synthetic-kinds", default=None,
        help="synthetic: only these document kinds (comma list of invoice, insurance_claim, shipping_notice);"
        " each document keeps its id and text. Or shipping_notice_v2 alone: the notices' second version, its own"
        " documents (the contact named in varied ways)"),
    LIMIT,
    opt("--sample", type=int, default=None, help="a fixed random sample of N documents (--seed)"),
    opt("--prompt", choices=["benchmark", "package"], default=None,
        help="the instruction a generator gets (and the judge is shown): the benchmark's own (default for benchmark"
        " datasets) or the package's (the only one of the synthetic set and of a file); generate on a run already"
        " made keeps the one the run records"),
]
# fmt: on


def parse_ids(text: str | None) -> list[str] | None:
    return [i.strip() for i in text.split(",") if i.strip()] if text else None


def scorer_name(text: str) -> ScorerId:
    """An argparse ``type``: a scorer name read once, where it enters, as its identity; a name that
    breaks the grammar or its family's declaration is a usage error that says why."""
    try:
        return checked(text.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def scorer_names(text: str) -> list[ScorerId]:
    """An argparse ``type``: a comma list of scorer names, each read as :func:`scorer_name`."""
    return [scorer_name(part) for part in text.split(",") if part.strip()]


def _plain_cache_warnings() -> None:
    """The response cache's warnings as one ``warning: ...`` line on stderr, not Python's two."""
    import warnings

    from construct_eval.llm.cache import CacheWarning

    shown = warnings.showwarning
    if getattr(shown, "plain_cache_warnings", False):
        return

    def show(message: Any, category: type[Warning], *rest: Any, **kw: Any) -> None:
        if issubclass(category, CacheWarning):
            print(f"warning: {message}", file=sys.stderr, flush=True)
        else:
            shown(message, category, *rest, **kw)

    show.plain_cache_warnings = True  # type: ignore[attr-defined]
    warnings.showwarning = show


def client_from(args: argparse.Namespace) -> LLMClient:
    _plain_cache_warnings()
    if not args.base_url or not args.model:
        raise UsageError(
            "--base-url and --model are required (or set CONSTRUCT_EVAL_BASE_URL and CONSTRUCT_EVAL_MODEL)"
        )
    endpoint = Endpoint(
        args.base_url,
        args.model,
        backend=args.backend,
        api_key=os.environ.get(args.api_key_env),
        endpoint_id=args.endpoint_id,
    )
    cache: Any = False if args.no_cache else (args.cache or True)  # one that cannot be opened: warned, not used
    return make_client(
        endpoint,
        concurrency=args.concurrency,
        timeout_s=args.timeout,
        max_retries=args.max_retries,
        cache=cache,
        adaptive=args.adaptive_concurrency,
        replicas=replica_urls(args.replicas),
        affinity=args.replica_routing == "affinity",
    )


def replica_urls(text: str | None) -> list[str]:
    """``--replicas``: a comma list of URLs, or ``@file`` with one per line."""
    if not text:
        return []
    if text.startswith("@"):
        text = ",".join(Path(text[1:]).read_text().split())
    return [u.strip() for u in text.split(",") if u.strip()]


def dataset_from(args: argparse.Namespace) -> Dataset:
    ds = load_dataset(
        args.dataset,
        data_dir=args.data_dir,
        schema=args.schema,
        input_col=args.input_col,
        truth_col=args.truth_col,
        id_col=args.id_col,
        n=args.n,
        seed=args.seed,
        prompt=getattr(args, "prompt", None),
        kinds=parse_ids(getattr(args, "synthetic_kinds", None)),
    )
    return ds.select(limit=args.limit, sample=args.sample, seed=args.seed)


def index_figures(args: argparse.Namespace, run: RunDir, out: Path, written: list[Path]) -> None:
    """figures/index.md: which scorer each figure is about, and the command that made it."""
    from construct_eval.paper.figure_index import update_index
    from construct_eval.reports.collect import collect

    if not written:
        return
    scorers = [(i.level, i.scorer) for i in collect(run)]
    command = getattr(args, "invocation", None) or f"construct-eval {args.command} --run {args.run}"
    update_index(out / "figures", written, scorers, data=str(run.path), command=command)


def print_report(report: Any) -> int:
    """Print what a library stage or analysis did (its ``lines()``)."""
    print("\n".join(report.lines()))
    return 0


def price_options(args: argparse.Namespace) -> dict[str, Any]:
    """Prices and, for a packaged model assembled here, its own token counter (else an estimate)."""
    from construct_eval.serving.models import local_tokenizer

    prices: dict[str, Any] = {"price_in": args.price_in, "price_out": args.price_out, "discount": args.discount}
    count = local_tokenizer(args.model) if args.model else None
    if count is not None:
        prices |= {"count": count, "counted_by": args.model}
    return prices


def spend_of(args: argparse.Namespace) -> Any:
    """The spending limit of :func:`add_spend_args` (None without ``--max-cost``)."""
    from construct_eval.llm.budget import Budget

    if args.max_cost is None:
        return None
    if args.price_in is None or args.price_out is None:
        raise UsageError("--max-cost needs --price-in and --price-out (per million tokens)")
    return Budget(args.max_cost, args.price_in, args.price_out)


def stage_run_options(args: argparse.Namespace) -> dict[str, Any]:
    """How a stage makes its calls (:class:`~construct_eval.judging.stage.StageOptions`): quietly
    or not, as a dry run priced at the options' prices, within a spending limit, through the
    Batch API."""
    prices = price_options(args) if args.dry_run else {}
    return {
        "progress": not args.quiet, "dry_run": args.dry_run, "prices": prices, "budget": spend_of(args),
        "batch": args.batch, "batch_poll": args.batch_poll,
    }  # fmt: skip


# -- one writer per run folder ------------------------------------------------------------

LOCKED_BY = (Writes.NEW_RUN, Writes.RUN)
"""What the commands that hold their run folder's lock write (and that take ``--wait``)."""

WAIT = opt("--wait", action="store_true",
           help="if another process writes to the run, wait for it to finish (default: stop at once, exit 75)")  # fmt: skip


def written_folder(args: argparse.Namespace) -> str | None:
    """The folder the command of ``args`` writes (:class:`Writes`), whose ``provenance.jsonl``
    records it; None where it writes none."""
    out = getattr(args, "out", None)
    if args.writes == Writes.NOTHING:
        return None
    if args.writes in (Writes.NEW_RUN, Writes.TABLES) and out:
        return str(out)
    return getattr(args, "run", None)


def take_run_lock(args: argparse.Namespace, target: Path) -> int | None:
    """Lock ``target`` for a writing command (kept on ``args``); the exit code if it is refused.

    Another holder is named on stderr; with ``--wait`` that is said once and the command waits.
    """
    from construct_eval.cli.exits import LOCKED
    from construct_eval.runlock import RunLock, RunLocked

    if args.writes not in LOCKED_BY or (args.command == "bias" and not args.base_url):
        return None
    if args.writes == Writes.NEW_RUN:
        target.mkdir(parents=True, exist_ok=True)
    elif not target.is_dir():
        return None  # the command says the folder does not exist
    command = getattr(args, "invocation", None) or f"construct-eval {args.command}"

    def say(exc: RunLocked) -> None:
        print(f"waiting: run folder {exc.folder} is being written by {exc.who}", file=sys.stderr, flush=True)

    try:
        args.run_lock = RunLock(target, command).acquire(wait=bool(getattr(args, "wait", False)), on_wait=say)
    except RunLocked as exc:
        print(f"error: {exc}", file=sys.stderr)
        return LOCKED
    return None


def release_run_lock(args: argparse.Namespace) -> None:
    lock = getattr(args, "run_lock", None)
    if lock is not None:
        lock.release()


def stage_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of :func:`stage_opts` as the library stages take them: which documents,
    and :func:`stage_run_options`."""
    return {"data_dir": args.data_dir, "ids": parse_ids(args.ids), "limit": args.limit, **stage_run_options(args)}
