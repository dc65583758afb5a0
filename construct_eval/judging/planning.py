"""Planning a judge's calls over a run folder, before any is made: which calls are still to do
(resume), how the run records the judge, and the summary a judging stage fills in. Both ways of
making the calls, live (:mod:`.scoring`) and through batch files (:mod:`.batch`), start here."""

from __future__ import annotations

import datetime as _dt
import os
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from construct_eval.data.runs import RunDir
from construct_eval.judging.judge import Judge, JudgeTask
from construct_eval.kinds import judge_modes
from construct_eval.llm.engine import StageError


class ScoringError(StageError):
    """A document or field could not be judged for a reason that is not the endpoint's."""


@dataclass
class ScoreSummary:
    documents: int = 0
    tasks_planned: int = 0
    tasks_skipped_done: int = 0
    judgments_written: int = 0
    calls_made: int = 0
    cache_hits: int = 0
    retries: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    outputs_not_judgeable: list[dict[str, Any]] = field(default_factory=list)
    status: Counter[str] = field(default_factory=Counter)
    unscored_by_reason: Counter[str] = field(default_factory=Counter)

    @property
    def unscored_rate(self) -> float:
        total = sum(self.status.values())
        return self.status.get("unscored", 0) / total if total else 0.0

    def lines(self) -> list[str]:
        out = [
            f"documents: {self.documents}  calls planned: {self.tasks_planned}  already done: {self.tasks_skipped_done}",
            f"judgments written: {self.judgments_written}  calls made: {self.calls_made}  "
            f"cache hits: {self.cache_hits}  retries: {self.retries}  failed calls: {self.failed_calls}",
            f"tokens: prompt {self.prompt_tokens}  completion {self.completion_tokens}  time: {self.seconds:.1f}s",
            f"unscored rate (this session): {self.unscored_rate:.1%}",
        ]
        for reason, n in self.unscored_by_reason.most_common():
            out.append(f"  unscored {reason}: {n}")
        if self.outputs_not_judgeable:
            out.append(f"outputs not judged (did not parse): {len(self.outputs_not_judgeable)}")
        return out


def plan_score(
    run: RunDir,
    judge: Judge,
    modes: Sequence[str],
    *,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> tuple[ScoreSummary, list[JudgeTask], set[str]]:
    """The calls :func:`score_run` would make (no model call): a summary with the counts, the
    tasks still to do, and the judgment keys already written. ``modes`` in any spelling
    (``"doc,fields"``, ``("doc", "fields")``, :class:`~construct_eval.kinds.JudgeMode`)."""
    try:
        modes = judge_modes(modes)
    except ValueError as exc:
        raise ScoringError(str(exc)) from None
    items, skipped = run.judge_inputs(data_dir=data_dir)
    if ids is not None:
        wanted = set(ids)
        unknown = wanted - {i.doc_id for i in items} - {s["id"] for s in skipped}
        if unknown:
            raise ScoringError(f"{run.path}: no output for document(s) {sorted(unknown)[:5]}")
        items = [i for i in items if i.doc_id in wanted]
        skipped = [s for s in skipped if s["id"] in wanted]
    if limit is not None:
        items = items[:limit]
    done = judge.done_keys(run.iter_rows("judgments"))
    summary = ScoreSummary(documents=len(items), outputs_not_judgeable=skipped)
    todo: list[JudgeTask] = []
    for item in items:
        try:
            planned = judge.plan(item, modes)
        except Exception as exc:  # bad schema or output: name the document
            raise ScoringError(f"document {item.doc_id!r}: cannot plan judge calls: {exc}") from exc
        summary.tasks_planned += len(planned)
        for task in planned:
            if all(k in done for k in task.keys):
                summary.tasks_skipped_done += 1
            else:
                todo.append(task)
    return summary, todo, done


def record_judge(run: RunDir, judge: Judge) -> None:
    """Add this judge's endpoint and configuration to run.json's ``judges`` history.

    One entry per configuration hash (the ``config_hash`` of its judgments), with when it was
    first and last used; ``judge`` keeps the latest, as before. Nothing earlier is overwritten.
    """
    meta = run.meta()
    history: list[dict[str, Any]] = list(meta.get("judges") or [])
    if not history and meta.get("judge"):
        history.append({**meta["judge"], "recorded": "before judge histories were kept"})
    entry = {
        "endpoint": judge.client.endpoint.describe(),
        "config": judge.config.signature(),
        "config_hash": judge.config.hash,
        "concurrency": judge.client.concurrency,
    }
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    same = [
        h for h in history if h.get("config_hash") == entry["config_hash"] and h.get("endpoint") == entry["endpoint"]
    ]
    if same:
        same[0]["last_used"] = now
    else:
        history.append({**entry, "first_used": now, "last_used": now})
    run.write_meta("judges", history)
    run.write_meta("judge", {k: entry[k] for k in ("endpoint", "config", "config_hash")})
