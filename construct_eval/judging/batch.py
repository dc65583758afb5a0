"""Offline judging through batch files in the OpenAI Batch API format, which vLLM's
``run-batch`` reads and writes too.

``export_batch`` writes one request line per judge call still to make (after resume), the same
body a live call would post, ``custom_id`` the call's resume key; run the file anywhere (vLLM
``run-batch``, a provider's batch API) and ``import_batch`` reads the results file back: each
reply goes through the same parsing, unscored reasons, log-probs, response cache and judgment
rows as a live reply, marked ``via: batch`` with the model and system fingerprint the reply
names. Lines the runner failed are listed with their error and left undone (a rerun, live or
batch, makes them); a line whose call is already judged is skipped, so importing a file twice
writes nothing twice. Other providers' own batch APIs and formats are not covered.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from construct_eval.data.runs import RunDir, iter_jsonl
from construct_eval.digest import sha256_hex
from construct_eval.judging.judge import Judge, JudgeTask
from construct_eval.judging.scoring import plan_score, record_judge
from construct_eval.llm.client import cache_key, request_body, request_kwargs, result_from_completion

URL = "/v1/chat/completions"


def custom_id(task: JudgeTask) -> str:
    """A call's id in a batch file: its judgment key (a joint call: a hash of its keys)."""
    return task.keys[0] if len(task.keys) == 1 else "joint-" + sha256_hex("|".join(task.keys))[:24]


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


def reply_of(line: Mapping[str, Any]) -> tuple[Any, str | None]:
    """(completion body, None) or (None, why there is none) for one results line, in OpenAI's
    form (``response: {status_code, body}`` or ``error: {code, message}``) or vLLM's (the same,
    with an error body ``{"object": "error", "message": ...}``)."""
    error = line.get("error")
    if error:
        if isinstance(error, Mapping):
            return None, f"{error.get('code') or 'error'}: {error.get('message') or ''}".strip()
        return None, str(error)
    response = line.get("response") or {}
    status = int(response.get("status_code") or 200)
    body = response.get("body")
    if status != 200 or not isinstance(body, Mapping) or "choices" not in body:
        detail = ""
        if isinstance(body, Mapping):
            inner = body.get("error")
            detail = (inner.get("message") if isinstance(inner, Mapping) else None) or body.get("message") or ""
        return None, f"http_{status}: {detail}".strip()
    return body, None


@dataclass
class BatchImport:
    written: int = 0  # judgment rows written
    replies: int = 0  # results lines read into judgments
    failed: list[tuple[str, str]] = field(default_factory=list)  # (custom_id, why): left undone
    skipped: int = 0  # lines whose call is already judged, or not of this configuration

    def lines(self) -> list[str]:
        out = [
            f"{self.replies} replies read, {self.written} judgments written (via batch); {self.skipped} lines skipped"
        ]
        if self.failed:
            out.append(f"{len(self.failed)} lines failed and are left undone (rerun to make them):")
            out += [f"  {cid}: {why}" for cid, why in self.failed[:20]]
        return out


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
