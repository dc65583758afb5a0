"""The bounded-queue engine that every model-calling stage runs on (the judge, reflection,
verdicts, generation), with the one spending limit they share.

A stage plans its calls first (cheap: no model call), so the progress bar shows the real
total from the start, then hands them here. Workers take tasks in plan order, so on a
one-slot server a document's calls run back to back and share its prompt prefix; each
finished task's rows are written at once (append-only), so a killed run loses at most the
calls in flight and resumes with the rest.

The first failure that is not the endpoint's transient trouble (those are rows with a
reason, never exceptions) stops the stage: the remaining tasks are drained unsent and the
error, naming the document, is raised after what finished has been written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from construct_eval.llm.budget import Budget, BudgetReached, worst_case_tokens
from construct_eval.llm.client import ChatRequest, EndpointError

T = TypeVar("T")
Rows = list[dict[str, Any]]


def progress_bar(total: int, enabled: bool, desc: str, unit: str = "call") -> Any:
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit=unit, dynamic_ncols=True)


async def run_tasks(
    tasks: Sequence[T],
    call: Callable[[T], Awaitable[Rows]],
    write: Callable[[Rows], Any],
    *,
    concurrency: int,
    progress: bool = True,
    desc: str = "calling",
    on_error: Callable[[T, Exception], BaseException] | None = None,
    fatal: tuple[type[BaseException], ...] = (),
) -> int:
    """Run ``call`` on every task with at most ``concurrency`` in flight; returns tasks finished.

    ``write`` gets each finished task's rows. An exception of a type in ``fatal`` is raised
    as is; any other is passed through ``on_error`` (to name the document) and raised; in
    both cases after the tasks already running have finished and been written.
    """
    n_workers = max(1, concurrency) * 2  # a prepared call waits behind every call in flight
    queue: asyncio.Queue[T | None] = asyncio.Queue()
    for task in tasks:
        queue.put_nowait(task)
    for _ in range(n_workers):
        queue.put_nowait(None)
    bar = progress_bar(len(tasks), progress, desc)
    failure: list[BaseException] = []
    finished = 0

    async def worker() -> None:
        nonlocal finished
        while (task := await queue.get()) is not None:
            if failure:
                continue  # drain unsent
            try:
                rows = await call(task)
            except fatal as exc:
                failure.append(exc)
                continue
            except Exception as exc:
                failure.append(on_error(task, exc) if on_error else exc)
                if failure[-1] is not exc:
                    failure[-1].__cause__ = exc
                continue
            write(rows)
            finished += 1
            bar.update(1)

    try:
        await asyncio.gather(*(worker() for _ in range(n_workers)))
    finally:
        bar.close()
    if failure:
        raise failure[0]
    return finished


class KeyedTask(Protocol):
    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=KeyedTask)


def reply_tokens(rows: Rows) -> tuple[int, int] | None:
    """What a task's reply used (prompt, completion tokens), from its first row; None when the
    reply came from the response cache (it cost nothing). Rows carry the counts at the top
    (judgments, stage rows) or under ``usage`` (generation outputs)."""
    if not rows or rows[0].get("cached"):
        return None
    row = rows[0]
    usage = row.get("usage") if isinstance(row.get("usage"), dict) else row
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


@dataclass(frozen=True)
class Spending:
    """A spending limit over a stage's calls: each task reserves the worst case of its request
    (``request_of``) before it is sent and settles at what its reply used (``used_of``); the
    first task that could pass the limit stops the stage with :class:`BudgetReached`."""

    budget: Budget
    request_of: Callable[[Any], ChatRequest]
    used_of: Callable[[Rows], tuple[int, int] | None] = reply_tokens

    async def pay(self, task: Any, call: Callable[[Any], Awaitable[Rows]]) -> Rows:
        worst = self.budget.cost(*worst_case_tokens(self.request_of(task)))
        self.budget.reserve(worst)
        rows: Rows = []
        try:
            rows = await call(task)
        finally:
            used = self.used_of(rows)
            self.budget.settle(worst, self.budget.cost(*used) if used else 0.0)
        return rows


async def run_keyed_calls(
    tasks: Sequence[K],
    done: Collection[str],
    call: Callable[[K], Awaitable[dict[str, Any] | Rows]],
    append: Callable[[Rows], int],
    *,
    concurrency: int,
    progress: bool,
    desc: str,
    where: Callable[[K], str],
    fatal: tuple[type[BaseException], ...] = (),
    spending: Spending | None = None,
    error: Callable[[str], Exception] | None = None,
    announce: bool = True,
) -> tuple[int, int]:
    """The tasks whose key is not in ``done``, their rows appended as each finishes.

    This is the one loop every model-calling stage runs on (the judge, reflection, verdicts,
    generation). ``call`` returns a task's row (or rows: a joint judge call writes one per
    field); ``append`` writes them and returns how many were written. With ``spending`` each
    call reserves its worst case first and settles at what it used. The endpoint's trouble
    (:class:`~construct_eval.llm.client.EndpointError`), the spending limit and ``fatal``
    errors are raised as they are; any other names its task (``where``) in an ``error``
    (default :class:`StageError`); both after the finished rows are written. ``announce``
    prints how many calls are to make and how many were done before.

    Returns (calls planned, rows written).
    """
    todo = [t for t in tasks if t.key not in done]
    if announce:
        print(f"{len(todo)} {desc} calls to make; {len(tasks) - len(todo)} already done", flush=True)
    written = 0
    make = error or StageError

    def write(rows: Rows) -> None:
        nonlocal written
        written += append(rows)

    async def one(task: K) -> Rows:
        out = await call(task)
        return out if isinstance(out, list) else [out]

    async def paid(task: K) -> Rows:
        assert spending is not None
        return await spending.pay(task, one)

    await run_tasks(
        todo,
        one if spending is None else paid,
        write,
        concurrency=concurrency,
        progress=progress,
        desc=desc,
        on_error=lambda t, e: make(f"{where(t)}: {e}"),
        fatal=(EndpointError, BudgetReached, *fatal),
    )
    return len(todo), written


class StageError(RuntimeError):
    """A call failed for a reason that is not the endpoint's; the message names the document."""


class StageFailed(RuntimeError):
    """A stage stopped; the rows it wrote are kept and a rerun resumes with the rest."""


class StageStopped(StageFailed):
    """A stage stopped at its spending limit (not an error: a rerun with a larger one goes on)."""


@contextmanager
def kept_on_failure(kept: str, also: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """Run a stage's calls; its failure becomes :class:`StageFailed` saying that what was written
    is kept (``kept``: where) and a rerun resumes, its spending limit :class:`StageStopped`.
    Failures are the endpoint's refusal, a call's :class:`StageError` and the ``also`` types
    (a run folder's errors, a provider's API errors)."""
    try:
        yield
    except BudgetReached as exc:
        raise StageStopped(f"stopped at the spending limit: {exc}") from exc
    except (EndpointError, StageError, *also) as exc:
        raise StageFailed(f"{exc}\n{kept}") from exc
