"""Offline judging through batch files in the OpenAI Batch API format, which vLLM's
``run-batch`` reads and writes too.

``export_batch`` writes one request line per judge call still to make (after resume), the same
body a live call would post, ``custom_id`` the call's resume key; run the file anywhere (vLLM
``run-batch``, a provider's batch API) and ``import_batch`` reads the results file back: each
reply goes through the same parsing, unscored reasons, log-probs, response cache and judgment
rows as a live reply, marked ``via: batch`` with the model and system fingerprint the reply
names. Lines the runner failed are listed with their error and left undone (a rerun, live or
batch, makes them); a line whose call is already judged is skipped, so importing a file twice
writes nothing twice. :class:`JudgeWork` is the same through a provider's Batch API
(:mod:`construct_eval.llm.batch_api`, submit, poll and import). Other providers' own batch APIs
and formats are not covered.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from construct_eval.data.runs import RunDir, iter_jsonl
from construct_eval.judging.judge import Judge, JudgeTask
from construct_eval.judging.planning import plan_score, record_judge
from construct_eval.llm.batch_api import URL, BatchImport, reply_of
from construct_eval.llm.client import ChatRequest, cache_key, request_body, request_kwargs, result_from_completion


def custom_id(task: JudgeTask) -> str:
    """A call's id in a batch file: its judgment key (a joint call: a hash of its keys)."""
    return task.key


def export_batch(
    run: RunDir,
    judge: Judge,
    modes: Sequence[str],
    out: str | os.PathLike[str],
    *,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> int:
    """Write the calls ``score`` would still make as a batch request file; returns how many."""
    _, todo, _ = plan_score(run, judge, modes, limit=limit, ids=ids, data_dir=data_dir)
    endpoint = judge.client.endpoint
    lines = [
        {"custom_id": custom_id(t), "method": "POST", "url": URL, "body": request_body(endpoint, judge.request_for(t))}
        for t in todo
    ]
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    return len(lines)


def import_batch(
    run: RunDir,
    judge: Judge,
    modes: Sequence[str],
    results: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    *,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> BatchImport:
    """Judgments from a batch results file, for the calls of this configuration still undone."""
    _, todo, done = plan_score(run, judge, modes, limit=limit, ids=ids, data_dir=data_dir)
    by_id = {custom_id(t): t for t in todo}
    rows_in = iter_jsonl(Path(results)) if isinstance(results, str | os.PathLike) else results
    report = BatchImport()
    client = judge.client
    record_judge(run, judge)
    for line in rows_in:
        task = by_id.pop(str(line.get("custom_id")), None)
        if task is None:
            report.skipped += 1
            continue
        body, why = reply_of(line)
        if why is not None:
            report.failed.append((custom_id(task), why))
            continue
        result = result_from_completion(body)
        if result.ok and client.cache is not None:
            req = judge.request_for(task)
            client.cache.put(cache_key(client.endpoint, request_kwargs(client.endpoint, req)), result)
        rows = [j.to_dict() for j in judge.judgments_for(task, result, done, via="batch")]
        report.written += run.append("judgments", rows)
        report.replies += 1
    return report


class JudgeWork:
    """The judge's calls still to make, for the Batch API
    (:func:`~construct_eval.llm.batch_api.run_batches`); replies read back as judgments."""

    def __init__(self, run: RunDir, judge: Judge, modes: Sequence[str], **plan: Any):
        self.run, self.judge, self.modes, self.plan = run, judge, modes, plan
        self.endpoint = judge.client.endpoint

    def pending(self) -> list[tuple[str, ChatRequest]]:
        _, todo, _ = plan_score(self.run, self.judge, self.modes, **self.plan)
        return [(t.key, self.judge.request_for(t)) for t in todo]

    def accept(self, results: list[dict[str, Any]]) -> BatchImport:
        return import_batch(self.run, self.judge, self.modes, results, **self.plan)
