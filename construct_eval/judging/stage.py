"""A model-calling stage over a run folder (reflection, P(correct) verdicts): the library layer
the CLI, the demo and notebooks share.

A stage reads the run's documents, picks the ones asked for, plans one keyed call per
(document, prompt or field), skips the keys already in its rows file, makes the rest on the
bounded-queue engine (rows appended as they finish) and writes its score rows. It returns a
:class:`StageReport`; on failure it raises :class:`StageFailed`, whose message says that what
was written is kept and a rerun resumes.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from construct_eval.data.runs import RunDir, RunError
from construct_eval.llm.client import EndpointError
from construct_eval.llm.engine import StageError, run_keyed_calls
from construct_eval.types import JudgeInput

Rows = list[dict[str, Any]]


class _Keyed(Protocol):
    key: str


K = TypeVar("K", bound=_Keyed)


class StageFailed(RuntimeError):
    """A stage stopped; the rows it wrote are kept and a rerun resumes with the rest."""


@dataclass(frozen=True)
class StageReport:
    """What a stage did: calls written this session, this configuration's rows, skipped outputs."""

    name: str
    written: int
    rows: Rows
    skipped: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def unscored(self) -> Counter[str]:
        return Counter(str(r["reason"]).split(":")[0] for r in self.rows if r.get("status") != "ok")

    def lines(self) -> list[str]:
        """The summary the CLI prints."""
        tail = "".join(f"; {k} {v}" for k, v in self.extra.items())
        return [
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


def documents(
    run: RunDir, *, data_dir: str | None = None, ids: Sequence[str] | None = None, limit: int | None = None
) -> tuple[list[JudgeInput], int]:
    """The run's judgeable documents as asked for, and how many outputs did not parse."""
    items, skipped = run.judge_inputs(data_dir=data_dir)
    return select_documents(items, ids, limit), len(skipped)


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
) -> int:
    """Make the calls of ``tasks`` not in ``done`` (appending rows to ``file``); rows written.

    ``client_context`` is the async context manager of the client (entered here, closed after).
    """

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
                fatal=(EndpointError,),
            )
            return written

    try:
        return asyncio.run(go())
    except (EndpointError, RunError, StageError) as exc:
        raise StageFailed(f"{exc}\n{file} written so far are kept in {run.file(file)}; rerun to resume") from exc
