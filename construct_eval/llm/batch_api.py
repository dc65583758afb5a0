"""Calls through a provider's Batch API (OpenAI's files and batches endpoints): submit, poll,
import; a killed run resumes polling the same batches instead of paying twice. The one batch
path of every model-calling stage (the judge, reflection, verdicts, generation).

The calls still to make (after resume) are written as batch request files, split to respect a
batch's limits on lines and bytes, uploaded and submitted; every step is recorded in the run's
``batches.jsonl`` before and after it happens (an intent line before a batch is created, its id
after), so a rerun finds its batches (by their input file where the id was not yet written) and
polls them. A stage says which calls it still has and how a reply becomes its rows (a
:class:`BatchWork`; :class:`KeyedWork` for rows written as live calls write them); lines the
provider failed or left undone at expiry are listed and stay undone, for a rerun or a live
fallback. ``reply_of`` reads one results line in OpenAI's or vLLM ``run-batch``'s form.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from construct_eval.llm.client import (
    ChatRequest,
    ChatResult,
    Endpoint,
    LLMClient,
    cache_key,
    request_body,
    request_kwargs,
    result_from_completion,
)
from construct_eval.llm.engine import progress_bar

URL = "/v1/chat/completions"

MAX_LINES = 50_000
MAX_BYTES = 200 * 1024 * 1024
"""OpenAI's per-batch limits (requests, input file size)."""
TERMINAL = ("completed", "expired", "failed", "cancelled")
STATE = "batches"


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


@dataclass
class BatchRun:
    submitted: int = 0  # batches submitted by this call
    resumed: int = 0  # batches found in the run folder and polled
    imported: BatchImport = field(default_factory=BatchImport)
    states: dict[str, str] = field(default_factory=dict)  # batch id -> final status

    def lines(self) -> list[str]:
        done = ", ".join(f"{b}: {s}" for b, s in self.states.items()) or "none"
        return [f"batches submitted {self.submitted}, resumed {self.resumed}; {done}", *self.imported.lines()]


class RunLog(Protocol):
    """What the batch path needs of a run folder: its append-only row files."""

    def iter_rows(self, name: str) -> Iterator[dict[str, Any]]: ...

    def append(self, name: str, rows: Iterable[Mapping[str, Any]]) -> int: ...


class BatchWork(Protocol):
    """A stage's calls for a batch: the ones still to make, and how replies become its rows."""

    endpoint: Endpoint

    def pending(self) -> list[tuple[str, ChatRequest]]: ...

    def accept(self, results: list[dict[str, Any]]) -> BatchImport: ...


def _client(ep: Endpoint) -> Any:
    import openai

    key = ep.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
    return openai.OpenAI(base_url=ep.normalized_url, api_key=key, max_retries=4, timeout=120.0)


def batches_of(run: RunLog) -> dict[str, dict[str, Any]]:
    """The run's batches by input file: the latest state of each (``batches.jsonl`` is a log)."""
    state: dict[str, dict[str, Any]] = {}
    for row in run.iter_rows(STATE):
        state.setdefault(row["input_file_id"], {}).update({k: v for k, v in row.items() if v is not None})
    return state


def _chunks(lines: Sequence[str], max_lines: int, max_bytes: int) -> list[list[str]]:
    chunks: list[list[str]] = []
    size = 0
    for line in lines:
        n = len(line.encode()) + 1
        if not chunks or len(chunks[-1]) >= max_lines or size + n > max_bytes:
            chunks.append([])
            size = 0
        chunks[-1].append(line)
        size += n
    return chunks


class KeyedWork:
    """Keyed calls still to make (a stage's tasks, generation's jobs), for a batch: replies read
    back as the rows their live calls write (``row_for``), marked ``via: batch``, into the file
    ``file_of`` names for a row, and put in the response cache as a live reply is."""

    def __init__(
        self,
        run: RunLog,
        client: LLMClient,
        tasks: Sequence[Any],
        done: set[str],
        request_for: Callable[[Any], ChatRequest],
        row_for: Callable[[Any, ChatResult], dict[str, Any]],
        file_of: Callable[[dict[str, Any]], str],
    ):
        self.run, self.client, self.done = run, client, done
        self.by_key = {t.key: t for t in tasks}
        self.request_for, self.row_for, self.file_of = request_for, row_for, file_of
        self.endpoint = client.endpoint

    def pending(self) -> list[tuple[str, ChatRequest]]:
        return [(k, self.request_for(t)) for k, t in self.by_key.items() if k not in self.done]

    def accept(self, results: list[dict[str, Any]]) -> BatchImport:
        report = BatchImport()
        for line in results:
            key = str(line.get("custom_id"))
            task = self.by_key.get(key)
            if task is None or key in self.done:
                report.skipped += 1
                continue
            body, why = reply_of(line)
            if why is not None:
                report.failed.append((key, why))
                continue
            result = result_from_completion(body)
            if result.ok and self.client.cache is not None:
                kwargs = request_kwargs(self.endpoint, self.request_for(task))
                self.client.cache.put(cache_key(self.endpoint, kwargs), result)
            row = self.row_for(task, result) | {"via": "batch", "reply_model": result.model,
                                                 "system_fingerprint": result.system_fingerprint}  # fmt: skip
            report.written += self.run.append(self.file_of(row), [row])
            report.replies += 1
            self.done.add(key)
        return report


def run_batches(
    run: RunLog,
    work: BatchWork,
    *,
    poll_s: float = 30.0,
    progress: bool = True,
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_BYTES,
    sleep: Callable[[float], None] = time.sleep,
) -> BatchRun:
    """Submit the calls still to make as batches (or resume the run's), poll them to the end and
    import their replies; returns what happened."""
    api = _client(work.endpoint)
    report = BatchRun()
    state = batches_of(run)
    # a batch whose id was not written before the last run stopped: find it by its input file
    for fid, b in state.items():
        if "batch_id" not in b:
            found = next((x for x in api.batches.list(limit=100).data if x.input_file_id == fid), None)
            if found is None:
                created = api.batches.create(input_file_id=fid, endpoint=URL, completion_window="24h")
                report.submitted += 1
            else:
                created = found
            run.append(STATE, [{"input_file_id": fid, "batch_id": created.id, "status": created.status}])
            b.update(batch_id=created.id, status=created.status)
    pending = {fid: b for fid, b in state.items() if not b.get("imported")}
    report.resumed = len(pending)
    waiting = {cid for b in pending.values() for cid in b.get("custom_ids", [])}
    lines = [
        json.dumps({"custom_id": cid, "method": "POST", "url": URL, "body": request_body(work.endpoint, req)},
                   ensure_ascii=False)
        for cid, req in work.pending() if cid not in waiting
    ]  # fmt: skip
    for chunk in _chunks(lines, max_lines, max_bytes):
        upload = api.files.create(file=("requests.jsonl", ("\n".join(chunk) + "\n").encode()), purpose="batch")
        cids = [json.loads(x)["custom_id"] for x in chunk]
        run.append(STATE, [{"input_file_id": upload.id, "custom_ids": cids, "status": "creating"}])  # intent first
        created = api.batches.create(input_file_id=upload.id, endpoint=URL, completion_window="24h")
        run.append(STATE, [{"input_file_id": upload.id, "batch_id": created.id, "status": created.status}])
        pending[upload.id] = {"input_file_id": upload.id, "batch_id": created.id, "custom_ids": cids}
        report.submitted += 1
    total = sum(len(b.get("custom_ids", [])) for b in pending.values())
    bar = progress_bar(total, progress, "batch", unit="request")
    finished = 0  # requests of the batches already imported
    try:
        while pending:
            done_now = 0
            for fid, b in list(pending.items()):
                batch = api.batches.retrieve(b["batch_id"])
                counts = batch.request_counts
                done_now += (counts.completed + counts.failed) if counts else 0
                if batch.status not in TERMINAL:
                    continue
                results: list[dict[str, Any]] = []
                for file_id in (batch.output_file_id, batch.error_file_id):
                    if file_id:
                        results += [json.loads(x) for x in api.files.content(file_id).text.splitlines() if x.strip()]
                got = work.accept(results)
                answered = {str(r.get("custom_id")) for r in results}
                if batch.status in ("failed", "cancelled"):  # lines the provider never ran: say why, leave undone
                    errors = getattr(batch, "errors", None)
                    data = getattr(errors, "data", None) or []
                    why = "; ".join(f"{getattr(e, 'code', '')}: {getattr(e, 'message', '')}" for e in data[:3])
                    why = f"batch {batch.status}" + (f" ({why})" if why else "")
                    got.failed += [(cid, why) for cid in b.get("custom_ids", []) if cid not in answered]
                report.imported.written += got.written
                report.imported.replies += got.replies
                report.imported.failed += got.failed
                run.append(STATE, [{"input_file_id": fid, "batch_id": batch.id, "status": batch.status,
                                    "imported": True, "failed": len(got.failed)}])  # fmt: skip
                report.states[batch.id] = batch.status
                finished += len(b.get("custom_ids", []))
                done_now -= (counts.completed + counts.failed) if counts else 0
                del pending[fid]
            bar.n = min(total, finished + done_now)  # the provider's own counts
            bar.refresh()
            if pending:
                sleep(poll_s)
    finally:
        bar.close()
    return report
