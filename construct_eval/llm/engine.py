"""The bounded-queue engine that every model-calling stage runs on (judge, reflection).

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
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

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
    key: str


K = TypeVar("K", bound=KeyedTask)


async def run_keyed_calls(
    tasks: Sequence[K],
    done: set[str],
    call: Callable[[K], Awaitable[dict[str, Any]]],
    append: Callable[[Rows], int],
    *,
    concurrency: int,
    progress: bool,
    desc: str,
    where: Callable[[K], str],
    fatal: tuple[type[BaseException], ...] = (),
) -> tuple[int, int]:
    """The tasks whose key is not in ``done``, one audit row each, appended as they finish.

    Returns (calls planned, rows written). Errors other than ``fatal`` ones name the task
    (``where``) and are raised as :class:`StageError` after the finished rows are written.
    """
    todo = [t for t in tasks if t.key not in done]
    print(f"{len(todo)} {desc} calls to make; {len(tasks) - len(todo)} already done", flush=True)
    written = 0

    def write(rows: Rows) -> None:
        nonlocal written
        written += append(rows)

    async def one(task: K) -> Rows:
        return [await call(task)]

    await run_tasks(
        todo,
        one,
        write,
        concurrency=concurrency,
        progress=progress,
        desc=desc,
        on_error=lambda t, e: StageError(f"{where(t)}: {e}"),
        fatal=fatal,
    )
    return len(todo), written


class StageError(RuntimeError):
    """A call failed for a reason that is not the endpoint's; the message names the document."""
