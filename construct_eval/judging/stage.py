"""A model-calling stage over a run folder (reflection, P(correct) verdicts, CONSTRUCT): the library
layer the CLI, the demo and notebooks share, and the scorer contract (:class:`ModelScorer`).

A stage reads the run's documents, picks the ones asked for, plans one keyed call per
(document, prompt or field), skips the keys already in its rows file, makes the rest on the
bounded-queue engine (rows appended as they finish) and writes its score rows. It returns a
:class:`StageReport`; on failure it raises the engine's :class:`StageFailed`, whose message
says that what was written is kept and a rerun resumes (:class:`StageStopped` at a spending
limit).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

from construct_eval.data.runs import RunDir, RunError
from construct_eval.llm.budget import Budget, CostEstimate, estimate_requests
from construct_eval.llm.client import ChatRequest, LLMClient
from construct_eval.llm.engine import Spending, kept_on_failure, run_keyed_calls
from construct_eval.parsing import is_request_failure
from construct_eval.scorer_registry import ScorerSpec, register, unregister
from construct_eval.types import JudgeInput

Rows = list[dict[str, Any]]


class _Keyed(Protocol):
    key: str


K = TypeVar("K", bound=_Keyed)


@dataclass(frozen=True)
class StageReport:
    """What a stage did: calls written this session, this configuration's rows, skipped outputs."""

    name: str
    written: int
    rows: Rows
    skipped: int
    extra: dict[str, Any] = field(default_factory=dict)
    estimate: CostEstimate | None = None  # a dry run: what the calls would cost; nothing was called
    notes: list[str] = field(default_factory=list)  # e.g. what the batches did

    @property
    def unscored(self) -> Counter[str]:
        """Calls that gave no score, by the first word of their reason: a row whose ``status`` is
        not ``ok``, or (a scorer that writes no status) one with a ``reason``."""
        failed = [r for r in self.rows if r.get("status", "unscored" if r.get("reason") else "ok") != "ok"]
        return Counter(str(r.get("reason") or "no reason given").split(":")[0] for r in failed)

    def lines(self) -> list[str]:
        """The summary the CLI prints."""
        if self.estimate is not None:
            return [f"dry run ({self.name}): nothing called", *self.estimate.lines()]
        tail = "".join(f"; {k} {v}" for k, v in self.extra.items())
        return [
            *self.notes,
            f"{self.written} {self.name} calls written; {len(self.rows)} of this configuration,"
            f" unscored: {dict(self.unscored) or 0}{tail}",
            f"{self.skipped} outputs could not be judged (did not parse)",
        ]


def select_documents(
    items: Sequence[JudgeInput], ids: Sequence[str] | None = None, limit: int | None = None
) -> list[JudgeInput]:
    """The documents named by ``ids`` (all if None), then the first ``limit`` of them."""
    chosen = list(items)
    if ids is not None:
        wanted = set(ids)
        chosen = [i for i in chosen if i.doc_id in wanted]
    return chosen[:limit] if limit else chosen


def on_current_outputs(rows: Sequence[Mapping[str, Any]], items: Sequence[JudgeInput]) -> Rows:
    """The audit rows of ``rows`` made on the outputs of ``items`` (the run's judgeable documents
    now): a row on an output since regenerated says nothing of the output scored now."""
    current = {(i.doc_id, i.output_hash) for i in items}
    return [dict(r) for r in rows if (r["id"], r["output_hash"]) in current]


def run_stage(
    run: RunDir,
    *,
    file: str,
    tasks: Sequence[K],
    done: set[str],
    call: Callable[[K], Awaitable[dict[str, Any]]],
    concurrency: int,
    progress: bool,
    desc: str,
    where: Callable[[K], str],
    client_context: Any,
    budget: Budget | None = None,
    request_of: Callable[[K], ChatRequest] | None = None,
) -> int:
    """Make the calls of ``tasks`` not in ``done`` (appending rows to ``file``); rows written.

    ``client_context`` is the async context manager of the client (entered here, closed after).
    With a ``budget`` each call reserves its worst case (``request_of`` gives its request) and
    settles at its row's token counts; the first call that could pass it stops the stage
    (the engine's :class:`~construct_eval.llm.engine.Spending`).
    """
    if budget is not None and request_of is None:
        raise ValueError("a spending limit needs request_of: the request each task sends")

    async def go() -> int:
        async with client_context:
            _, written = await run_keyed_calls(
                tasks,
                done,
                call,
                lambda rows: run.append(file, rows),
                concurrency=concurrency,
                progress=progress,
                desc=desc,
                where=where,
                spending=None if budget is None else Spending(budget, request_of),  # type: ignore[arg-type]
            )
            return written

    with kept_on_failure(f"{file} written so far are kept in {run.file(file)}; rerun to resume", (RunError,)):
        return asyncio.run(go())


def dry_run_report(
    name: str, client: LLMClient, requests: Sequence[ChatRequest], skipped: int, prices: Mapping[str, Any]
) -> StageReport:
    """What a stage's calls still to make would cost (no call made, nothing written)."""
    estimate = estimate_requests(client, requests, **prices)
    return StageReport(name, 0, [], skipped, estimate=estimate)


@dataclass(frozen=True)
class StageOptions:
    """How a stage makes its calls: live or through a Batch API, within a spending limit, or not
    at all (a dry run, priced with ``prices``)."""

    progress: bool = True
    dry_run: bool = False
    prices: Mapping[str, Any] = field(default_factory=dict)
    budget: Budget | None = None
    batch: bool = False
    batch_poll: float = 30.0


class StageWorker(Protocol):
    def request_for(self, task: Any) -> ChatRequest: ...

    def row_for(self, task: Any, result: Any) -> dict[str, Any]: ...

    async def run_task(self, task: Any) -> dict[str, Any]: ...

    def describe(self) -> dict[str, Any]: ...


def make_calls(
    run: RunDir,
    client: LLMClient,
    worker: StageWorker,
    *,
    name: str,
    file: str,
    tasks: Sequence[Any],
    done: set[str],
    skipped: int,
    where: Callable[[Any], str],
    options: StageOptions,
) -> StageReport | tuple[int, list[str]]:
    """A stage's calls still to make, as ``options`` say: a dry-run report, or (rows written,
    notes) after making them live or through the provider's Batch API."""
    if options.dry_run:
        todo = [worker.request_for(t) for t in tasks if t.key not in done]
        return dry_run_report(name, client, todo, skipped, options.prices)
    run.write_meta(name, worker.describe())
    if options.batch:  # submitted, polled, read back as live rows are
        from construct_eval.llm.batch_api import KeyedWork, run_batches

        work = KeyedWork(run, client, tasks, done, worker.request_for, worker.row_for, lambda _row: file)
        batches = run_batches(run, work, poll_s=options.batch_poll, progress=options.progress)
        return batches.imported.written, batches.lines()
    written = run_stage(
        run,
        file=file,
        tasks=tasks,
        done=done,
        budget=options.budget,
        request_of=worker.request_for,
        call=worker.run_task,
        concurrency=client.concurrency,
        progress=options.progress,
        desc=name,
        where=where,
        client_context=client,
    )
    return written, []


# --------------------------------------------------------------------------- the scorer contract


class ModelScorer:
    """A trust score that calls a model, declared in one class: what it is (``spec``, the
    registry's :class:`~construct_eval.scorer_registry.ScorerSpec`, whose ``cost_in`` names the
    run file its calls are kept in), how it is asked for on the command line (``command``,
    ``summary``, :meth:`add_options`, :meth:`options_from`), how it plans its calls
    (:meth:`plan`: one keyed task per call, a document's calls together), what it sends
    (:meth:`request_for`), what it keeps of a reply (:meth:`row_for`), which kept rows are its
    configuration's (:meth:`owns`) and the score rows it makes of them (:meth:`score_rows`).

    Everything else runs once for every scorer: choosing documents, resume (a task whose key is
    in the calls file is not called again), the dry run and its price, the spending limit, the
    Batch API, the run lock and provenance (the command line's writers are the registered
    scorers' commands), what ``repair`` says remakes the calls file, collecting the score rows
    for ``evaluate``/``calibrate``/figures and the cost ledger (both read the registry).
    Subclass it and decorate the class with :func:`model_scorer`: nothing else is edited.
    """

    spec: ClassVar[ScorerSpec]
    command: ClassVar[str]
    summary: ClassVar[str] = ""
    stage_name: ClassVar[str | None] = None  # its name in the run's meta and reports (default: the command)

    def __init__(self, client: LLMClient, **options: Any) -> None:
        self.client = client
        self.options = options

    # how it is asked for
    @classmethod
    def add_options(cls, parser: Any) -> None:
        """Its own command-line options (beyond the run, the endpoint and the stage options)."""

    @classmethod
    def options_from(cls, args: Any) -> dict[str, Any]:
        """Its constructor's options from the parsed command line."""
        return {}

    # what it does: override these
    def plan(self, items: Sequence[JudgeInput]) -> list[Any]:
        raise NotImplementedError

    def request_for(self, task: Any) -> ChatRequest:
        raise NotImplementedError

    def row_for(self, task: Any, result: Any) -> dict[str, Any]:
        raise NotImplementedError

    def score_rows(self, rows: Sequence[Mapping[str, Any]], *, items: Sequence[JudgeInput], run: RunDir) -> Rows:
        """The score rows of its configuration's kept ``rows`` (on the run's current outputs);
        ``items`` are the run's judgeable documents, ``run`` the folder (for what else it reads)."""
        raise NotImplementedError

    # defaults most scorers keep
    async def run_task(self, task: Any) -> dict[str, Any]:
        return self.row_for(task, await self.client.complete(self.request_for(task)))

    def owns(self, row: Mapping[str, Any]) -> bool:
        """Whether this configuration made the kept row (default: every row of the calls file)."""
        return True

    def done_keys(self, rows: Sequence[Mapping[str, Any]]) -> set[str]:
        """The keys of the calls already made: this configuration's rows, a failed call excepted
        (it is made again)."""
        return {r["key"] for r in rows if r.get("key") and self.owns(r) and not is_request_failure(r.get("reason"))}

    @property
    def refused(self) -> list[dict[str, Any]]:
        """Outputs :meth:`plan` found it cannot score at all (``{"id", "reason"}`` each): counted
        as skipped; its :meth:`score_rows` says what rows they get."""
        return []

    def describe(self) -> dict[str, Any]:
        """What the run's meta records of this configuration."""
        return {"endpoint": self.client.endpoint.describe(), **self.options}

    def where(self, task: Any) -> str:
        """A task in an error message: the document (and field) it is about."""
        item = getattr(task, "item", None)
        field_name = getattr(task, "field", None)
        return f"document {getattr(item, 'doc_id', '?')!r}" + (f", {field_name}" if field_name else "")

    def extra(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Anything more the report line says (e.g. a mean of the replies)."""
        return {}

    @property
    def families(self) -> set[str]:
        """The scorer families whose rows :meth:`score_rows` replaces."""
        return {self.spec.family}

    @property
    def calls_file(self) -> str:
        if self.spec.cost_in is None:
            raise ValueError(f"scorer {self.spec.family!r} calls a model: its spec needs cost_in (the calls file)")
        return self.spec.cost_in


_MODEL_SCORERS: dict[str, type[ModelScorer]] = {}


def model_scorer(cls: type[ModelScorer]) -> type[ModelScorer]:
    """Register a :class:`ModelScorer`: its spec in the scorer registry (so tables, figures, the
    cost ledger and repair know it) and its command (so the command line offers it, as a run
    writer). A class decorator; returns the class."""
    if cls.spec.cost_in is None:
        raise ValueError(f"scorer {cls.spec.family!r} calls a model: its spec needs cost_in (the calls file)")
    taken = _MODEL_SCORERS.get(cls.command)
    if taken is not None and taken.spec.family != cls.spec.family:
        raise ValueError(f"command {cls.command!r} is taken by scorer {taken.spec.family!r}")
    if cls.spec.made_by is None:
        cls.spec = dataclasses.replace(cls.spec, made_by=cls.command)
    register(cls.spec, replace=True)
    _MODEL_SCORERS[cls.command] = cls
    return cls


def forget_model_scorer(command: str) -> None:
    """Undo :func:`model_scorer` (a test's own scorer, when it is done)."""
    cls = _MODEL_SCORERS.pop(command, None)
    if cls is not None:
        unregister(cls.spec.family)


ENTRY_POINT_GROUP = "construct_eval.scorers"
"""The entry-point group of scorers from other distributions: ``name = module:Class``, the class a
:class:`ModelScorer` subclass (registered here if its module did not decorate it)."""


def load_plugin_scorers() -> list[str]:
    """Register every model-calling scorer an installed distribution declares under
    :data:`ENTRY_POINT_GROUP` (as pytest finds its plugins); returns their commands. A declared
    object that is not a :class:`ModelScorer` subclass, or whose module fails to import, is an
    error naming the entry point and the distribution."""
    from importlib.metadata import entry_points

    commands = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {ep.name!r} ({ep.value}) of {getattr(ep.dist, 'name', '?')}"
        try:
            cls = ep.load()
        except Exception as exc:
            raise ImportError(f"{where} could not be loaded: {exc}") from exc
        if not (isinstance(cls, type) and issubclass(cls, ModelScorer)):
            raise TypeError(f"{where} is {cls!r}, not a ModelScorer subclass")
        if _MODEL_SCORERS.get(cls.command) is not cls:
            model_scorer(cls)
        commands.append(cls.command)
    return commands


def model_scorers() -> dict[str, type[ModelScorer]]:
    """Every registered model-calling scorer by its command, in the order registered."""
    return dict(_MODEL_SCORERS)


def run_scorer(
    run: RunDir,
    scorer: ModelScorer,
    *,
    data_dir: str | None = None,
    ids: Sequence[str] | None = None,
    limit: int | None = None,
    progress: bool = True,
    dry_run: bool = False,
    prices: Mapping[str, Any] | None = None,
    budget: Budget | None = None,
    batch: bool = False,
    batch_poll: float = 30.0,
) -> StageReport:
    """Run ``scorer`` over a run's documents (resumable): its calls still to make, kept in its
    calls file, then its score rows (made from every row of its configuration on the run's
    current outputs, not only this call's documents). Raises :class:`StageFailed` (what was
    written is kept; a rerun resumes)."""
    every, skipped = run.judge_inputs(data_dir=data_dir)
    items = select_documents(every, ids, limit)
    tasks = scorer.plan(items)
    file = scorer.calls_file
    done = scorer.done_keys(run.read(file))
    n_skipped = len(skipped) + len(scorer.refused)  # outputs that did not parse, and outputs it refused
    options = StageOptions(progress, dry_run, prices or {}, budget, batch, batch_poll)
    name = scorer.stage_name or scorer.command
    made = make_calls(
        run, scorer.client, scorer, name=name, file=file, tasks=tasks, done=done, skipped=n_skipped,
        where=scorer.where, options=options,
    )  # fmt: skip
    if isinstance(made, StageReport):
        return made
    written, notes = made
    # every row of this configuration on the run's current outputs, not only this call's
    # documents (a run scored a few documents at a time keeps them all); a retried call's new row
    mine = on_current_outputs([r for r in run.read_latest(file) if scorer.owns(r)], every)
    run.replace_scorers(scorer.score_rows(mine, items=every, run=run), scorer.families)
    return StageReport(name, written, mine, n_skipped, scorer.extra(mine), notes=notes)
