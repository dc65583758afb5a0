"""OpenAI's files and batches endpoints on a scripted server (:class:`BatchAPI`), answered from
the server's script."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from construct_eval.serving.scripted_replies import Action, Reply, Request, completion_body, messages_hash


class BatchAPI:
    """OpenAI's files and batches endpoints, enough for a client to run a batch end to end.

    ``POST /files`` (multipart upload), ``GET /files/{id}`` and ``/files/{id}/content``,
    ``POST /batches``, ``GET /batches/{id}``, ``POST /batches/{id}/cancel``. A batch moves one
    state per retrieve (validating -> in_progress -> finalizing -> completed; ``expire_after``
    retrieves ends it ``expired`` instead, with the lines not yet done in the error file;
    ``fail_validation`` ends it ``failed`` with an ``errors`` list and no files), and its
    replies come from the server's script, as live calls' do. ``fail_line`` picks lines the
    runner fails (they go to the error file).
    """

    STATES = ("validating", "in_progress", "finalizing", "completed")

    def __init__(self, script: Callable[[Request], Action], *, fail_line: Callable[[int], bool] | None = None,
                 expire_after: int | None = None, fail_validation: bool = False):  # fmt: skip
        self.script = script
        self.fail_validation = fail_validation  # True: every batch ends "failed" at validation
        self.fail_line = fail_line or (lambda i: False)
        self.expire_after = expire_after
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created = 0  # batches created, ever (a resumed run must not add one)
        self.hold = False  # True: batches stay in_progress (a test kills the client meanwhile)

    def _file(self, content: bytes, filename: str, purpose: str) -> dict[str, Any]:
        fid = f"file-{len(self.files) + 1}"
        meta = {"id": fid, "object": "file", "bytes": len(content), "created_at": 0, "filename": filename,
                "purpose": purpose}  # fmt: skip
        self.files[fid] = {"meta": meta, "content": content}
        return meta

    def upload(self, raw: bytes) -> dict[str, Any]:
        boundary = raw.split(b"\r\n", 1)[0]
        fields: dict[str, Any] = {}
        for part in raw.split(boundary)[1:]:
            if part.startswith(b"--"):
                break
            head, _, body = part.lstrip(b"\r\n").partition(b"\r\n\r\n")
            name = re.search(rb'name="([^"]+)"', head)
            filename = re.search(rb'filename="([^"]*)"', head)
            key = name.group(1).decode() if name else ""
            fields[key] = (
                body[:-2] if body.endswith(b"\r\n") else body,
                filename.group(1).decode() if filename else None,
            )
        content, filename = fields.get("file", (b"", "input.jsonl"))
        purpose = fields.get("purpose", (b"batch", None))[0].decode()
        return self._file(content, filename or "input.jsonl", purpose)

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        self.created += 1
        bid = f"batch_{self.created}"
        lines = self.files[body["input_file_id"]]["content"].decode().splitlines()
        batch = {"id": bid, "object": "batch", "endpoint": body.get("endpoint"), "errors": None,
                 "input_file_id": body["input_file_id"], "completion_window": body.get("completion_window", "24h"),
                 "status": "validating", "output_file_id": None, "error_file_id": None, "created_at": 0,
                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0}, "_retrieves": 0}  # fmt: skip
        self.batches[bid] = batch
        return batch

    def _finish(self, batch: dict[str, Any], expired: bool) -> None:
        lines = [json.loads(x) for x in self.files[batch["input_file_id"]]["content"].decode().splitlines()]
        out, errors = [], []
        for i, line in enumerate(lines):
            if expired and i >= len(lines) // 2:
                errors.append({"id": f"batch_req_{i}", "custom_id": line["custom_id"], "response": None,
                               "error": {"code": "batch_expired", "message": "this request could not be executed before the completion window expired"}})  # fmt: skip
                continue
            if self.fail_line(i):
                errors.append({"id": f"batch_req_{i}", "custom_id": line["custom_id"], "response": None,
                               "error": {"code": "server_error", "message": "scripted failure"}})  # fmt: skip
                continue
            body = line["body"]
            action = self.script(Request(line.get("url", ""), body, 1, messages_hash(body.get("messages", []))))
            reply = action if isinstance(action, Reply) else Reply("Rating: [[5]]")
            out.append({"id": f"batch_req_{i}", "custom_id": line["custom_id"],
                        "response": {"status_code": 200, "request_id": f"req_{i}", "body": completion_body(body, reply)},
                        "error": None})  # fmt: skip
        dump = lambda rows: "".join(json.dumps(r) + "\n" for r in rows).encode()  # noqa: E731
        batch["output_file_id"] = self._file(dump(out), "output.jsonl", "batch_output")["id"] if out else None
        batch["error_file_id"] = self._file(dump(errors), "errors.jsonl", "batch_output")["id"] if errors else None
        batch["request_counts"] |= {"completed": len(out), "failed": len(errors)}
        batch["status"] = "expired" if expired else "completed"

    def retrieve(self, bid: str) -> dict[str, Any]:
        batch = self.batches[bid]
        if batch["status"] in ("completed", "expired", "failed", "cancelled"):
            return batch
        batch["_retrieves"] += 1
        if self.fail_validation:
            batch["status"] = "failed"
            batch["errors"] = {"object": "list", "data": [{"code": "invalid_request", "message": "scripted validation failure", "line": 1}]}  # fmt: skip
            return batch
        if self.expire_after is not None and batch["_retrieves"] >= self.expire_after:
            self._finish(batch, expired=True)
            return batch
        if self.hold and batch["status"] == "in_progress":
            return batch
        nxt = self.STATES[min(self.STATES.index(batch["status"]) + 1, len(self.STATES) - 1)]
        if nxt == "completed":
            self._finish(batch, expired=False)
        else:
            batch["status"] = nxt
            if nxt == "finalizing":
                batch["request_counts"]["completed"] = batch["request_counts"]["total"]
        return batch

    def route(self, method: str, path: str, raw: bytes) -> tuple[int, bytes, dict[str, str]] | None:
        """The answer to a files/batches request, or None for any other path."""
        path = path.split("?", 1)[0].rstrip("/")
        public = lambda obj: json.dumps({k: v for k, v in obj.items() if not k.startswith("_")}).encode()  # noqa: E731
        m = re.search(r"/files(?:/([^/]+))?(/content)?$", path)
        if m:
            fid, content = m.group(1), m.group(2)
            if method == "POST" and fid is None:
                return 200, json.dumps(self.upload(raw)).encode(), {}
            if fid not in self.files:
                return 404, json.dumps({"error": {"message": f"no file {fid}"}}).encode(), {}
            if content:
                return 200, self.files[fid]["content"], {}
            return 200, json.dumps(self.files[fid]["meta"]).encode(), {}
        m = re.search(r"/batches(?:/([^/]+))?(/cancel)?$", path)
        if m:
            bid, cancel = m.group(1), m.group(2)
            if method == "POST" and bid is None:
                return 200, public(self.create(json.loads(raw or b"{}"))), {}
            if method == "GET" and bid is None:  # list, newest first
                data = [json.loads(public(b)) for b in reversed(self.batches.values())]
                return 200, json.dumps({"object": "list", "data": data, "has_more": False}).encode(), {}
            if bid not in self.batches:
                return 404, json.dumps({"error": {"message": f"no batch {bid}"}}).encode(), {}
            if cancel:
                self.batches[bid]["status"] = "cancelled"
                return 200, public(self.batches[bid]), {}
            return 200, public(self.retrieve(bid)), {}
        return None
