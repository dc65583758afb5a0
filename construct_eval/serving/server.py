"""Entry point of the embedded llama.cpp server, with measured fixes to llama-cpp-python 0.3.x.

llama-cpp-python returns log-probs only from a model loaded with ``logits_all``, and then pays
for them three times, none of which the answer needs:

1. **Ranking.** The top alternatives of every generated token are found by sorting the whole
   vocabulary in Python: ``sorted(zip(logprobs, range(n_vocab)), reverse=True)``. For Qwen's
   151,936 tokens that is 0.18 s per generated token, several times the cost of generating
   it (a 300-token extraction with token log-probs took about 100 s instead of 25 s).
2. **Prompt logits.** Every prompt token's logits are computed and copied into a
   ``n_ctx x n_vocab`` array, although only the last prompt token's are read (they score the
   first generated token).
3. **Log-softmax of the prompt.** At the end of a request the log-softmax is taken over all
   those rows (about 5 s for a 2,000-token prompt) and then all but the completion's rows
   are dropped.

:func:`patch_logprob_ranking` fixes the first: it gives the ``llama_cpp.llama`` module its own
``zip`` and ``sorted``, so that a
``(scores, range(len(scores)))`` zip over a whole vocabulary is ranked with a numpy partial
sort instead, with the same values in the same order (ties broken as Python's tuple sort
breaks them: higher token id first). Only the first :data:`RANKED_KEPT` entries of the
ranking are kept, more than the 20 alternatives the OpenAI API allows. Every other use of
``zip`` and ``sorted`` in that module is untouched.

:func:`patch_prompt_logits` fixes the other two: llama.cpp computes logits for the last token
of each prompt batch only (generated tokens are evaluated one at a time and keep theirs), and
the log-softmax is taken over the rows that are read. Log-probs of prompt tokens (``echo``
with ``logprobs`` on the completions endpoint) are therefore refused with a clear error;
construct-eval never asks for them. Tests check that the patched server returns the same
tokens and log-probs as the stock one.

:func:`patch_json_string_grammar` keeps control characters out of JSON strings generated under
a JSON schema. llama-cpp-python 0.3.x converts a schema into a grammar whose string character
is ``[^"\\]``, so a model may write a raw newline inside a string: invalid JSON that a strict
parser refuses (Cleanlab's TLM failed on the first claim that way). llama.cpp's own converter,
and llama-cpp-python's grammar for schema-free JSON, exclude ``\x00-\x1f`` and ``\x7f``; the
patch does the same.

:class:`OpenAIJsonSchema` makes the server accept OpenAI's structured-output request,
``response_format={"type": "json_schema", "json_schema": {"schema": ...}}``, which
llama-cpp-python 0.3.x rejects with HTTP 500 (it knows only ``json_object`` with a
``schema``). Clients that cannot be told about the backend, such as Cleanlab's TLM, send it;
the request is rewritten into llama-cpp-python's own form, so the same schema is enforced by
the same grammar.

:class:`OpenAIJsonSchema` also answers ``GET .../construct-eval/server`` with what
:class:`construct_eval.serving.models.LocalServer` put in ``CONSTRUCT_EVAL_SERVER_INFO``: the
server's identity (model sha256, context size, llama-cpp-python version, :data:`SERVER_PATCHES`)
and its one slot, so clients key their resume and cache entries on what changes the replies,
not on the port.

The patches live in the server process only; the rest of construct-eval never imports
llama_cpp.

Run as ``python -m construct_eval.serving.server`` with the arguments of
``python -m llama_cpp.server``.
"""

from __future__ import annotations

import builtins
import json
import os
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, MutableMapping, Sequence
from typing import Any

import numpy as np

SERVER_PATCHES = "ranking+prompt-logits+json-string-char+json-schema/1"
"""The fixes this server applies to llama-cpp-python; part of the embedded server's identity.
Change the version when a patch changes what the server replies."""

SERVER_INFO_ENV = "CONSTRUCT_EVAL_SERVER_INFO"

RANKED_KEPT = 64
"""Alternatives kept per token: a request for more top log-probs gets this many."""

_VOCABULARY_MIN = 1024
"""A (scores, range) zip shorter than this is an ordinary zip (no vocabulary is this small)."""


class VocabularyScores:
    """``zip(scores, range(len(scores)))`` over a vocabulary, kept whole so it can be ranked fast."""

    def __init__(self, scores: Sequence[float] | np.ndarray):
        self.scores = scores

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        return builtins.zip(self.scores, range(len(self.scores)), strict=True)


def top_ranked(scores: Sequence[float] | np.ndarray, k: int) -> list[tuple[Any, int]]:
    """The first ``k`` of ``sorted(zip(scores, range(n)), reverse=True)``, computed with numpy.

    Ordered by score, then by token id, both descending, exactly as the Python tuple sort
    orders them; each entry keeps the score object of ``scores`` (numpy scalar or float).
    """
    values = np.asarray(scores)
    n = len(values)
    k = min(k, n)
    if k <= 0:
        return []
    kth = np.partition(values, n - k)[n - k]
    above = np.flatnonzero(values > kth)
    tied = np.flatnonzero(values == kth)
    chosen = np.concatenate([above, tied[len(tied) - (k - len(above)) :]])
    order = chosen[np.lexsort((-chosen, -values[chosen]))]
    return [(scores[i], i) for i in order.tolist()]


def _zip(*iterables: Iterable[Any], strict: bool = False) -> Iterable[Any]:
    if (
        len(iterables) == 2
        and not strict
        and isinstance(iterables[1], range)
        and isinstance(iterables[0], list | np.ndarray)
        and len(iterables[0]) >= _VOCABULARY_MIN
        and iterables[1] == range(len(iterables[0]))
    ):
        return VocabularyScores(iterables[0])
    return builtins.zip(*iterables, strict=strict)


def _sorted(iterable: Iterable[Any], /, *, key: Any = None, reverse: bool = False) -> list[Any]:
    if isinstance(iterable, VocabularyScores) and key is None and reverse:
        return top_ranked(iterable.scores, RANKED_KEPT)
    return builtins.sorted(iterable, key=key, reverse=reverse)


def patch_logprob_ranking() -> None:
    """Install the fast ranking into ``llama_cpp.llama`` (idempotent)."""
    import llama_cpp.llama as llama_module

    llama_module.zip = _zip  # type: ignore[attr-defined]
    llama_module.sorted = _sorted  # type: ignore[attr-defined]


class RowwiseLogSoftmax:
    """Log-softmax of a 2-D logits array, computed only for the rows that are indexed."""

    def __init__(self, logits: np.ndarray, log_softmax: Any):
        self.logits = logits
        self.log_softmax = log_softmax

    def __len__(self) -> int:
        return len(self.logits)

    def __getitem__(self, rows: Any) -> np.ndarray:
        return self.log_softmax(self.logits[rows])


def patch_prompt_logits() -> None:
    """Only the logits llama-cpp-python reads are computed and normalised (idempotent)."""
    from llama_cpp.llama import Llama

    if getattr(Llama, "_construct_eval_prompt_logits", False):
        return
    log_softmax = Llama.logits_to_logprobs
    create_completion = Llama._create_completion

    def logits_to_logprobs(logits: Any, axis: int = -1) -> Any:
        if isinstance(logits, np.ndarray) and logits.ndim == 2 and axis == -1:
            return RowwiseLogSoftmax(logits, log_softmax)
        return log_softmax(logits, axis=axis)

    def eval_last_logits(self: Llama, tokens: Sequence[int]) -> None:
        # Llama.eval of 0.3.36 with logits requested for the last token of each batch only
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        for i in range(0, len(tokens), self.n_batch):
            batch = tokens[i : min(len(tokens), i + self.n_batch)]
            n_past = self.n_tokens
            n_tokens = len(batch)
            self._batch.set_batch(batch=batch, n_past=n_past, logits_all=False)
            self._ctx.decode(self._batch)
            self.input_ids[n_past : n_past + n_tokens] = batch
            if self._logits_all:
                last = np.ctypeslib.as_array(self._ctx.get_logits(), shape=(self._n_vocab,))
                self.scores[n_past + n_tokens - 1, :] = last
            self.n_tokens += n_tokens
            self._requires_eval = False

    def refuse_prompt_logprobs(self: Llama, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("echo") and kwargs.get("logprobs") is not None:
            raise ValueError(
                "log-probs of prompt tokens (echo with logprobs) are not computed by "
                "construct_eval.serving.server; run `python -m llama_cpp.server` for them"
            )
        return create_completion(self, *args, **kwargs)

    Llama.logits_to_logprobs = staticmethod(logits_to_logprobs)  # type: ignore[method-assign]
    Llama.eval = eval_last_logits  # type: ignore[method-assign]
    Llama._create_completion = refuse_prompt_logprobs  # type: ignore[method-assign]
    Llama._construct_eval_prompt_logits = True  # type: ignore[attr-defined]


JSON_STRING_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])'
"""A character of a JSON string, in GBNF: no raw control characters (as llama.cpp's converter has it)."""


def patch_json_string_grammar() -> None:
    """Schema-constrained JSON strings exclude raw control characters (idempotent)."""
    import llama_cpp.llama_grammar as grammar

    grammar.PRIMITIVE_RULES["char"] = grammar.BuiltinRule(JSON_STRING_CHAR, [])


def json_schema_as_json_object(body: dict[str, Any]) -> dict[str, Any]:
    """The request body with an OpenAI ``json_schema`` response format in llama-cpp-python's form.

    ``{"type": "json_schema", "json_schema": {"name": .., "schema": S, "strict": ..}}`` becomes
    ``{"type": "json_object", "schema": S}``; a ``json_schema`` without a schema becomes plain
    ``json_object``. Every other body is returned unchanged (the same object).
    """
    fmt = body.get("response_format")
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return body
    spec = fmt.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    rewritten: dict[str, Any] = {"type": "json_object"}
    if isinstance(schema, dict):
        rewritten["schema"] = schema
    return {**body, "response_format": rewritten}


Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class OpenAIJsonSchema:
    """ASGI middleware: chat requests with a ``json_schema`` response format reach the app rewritten.

    The body of a POST to ``.../chat/completions`` is read whole, rewritten by
    :func:`json_schema_as_json_object` and handed on with its new length; a body that is not
    JSON goes on untouched, so the app reports it as it always does.
    """

    def __init__(self, app: Callable[[Message, Receive, Send], Awaitable[None]]):
        self.app = app

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if (
            scope.get("type") == "http"
            and scope.get("method") == "GET"
            and str(scope.get("path", "")).endswith("/construct-eval/server")
        ):
            await _send_server_info(send)
            return
        if not (
            scope.get("type") == "http"
            and scope.get("method") == "POST"
            and str(scope.get("path", "")).endswith("/chat/completions")
        ):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                await self.app(scope, _replay([message], receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            rewritten = json_schema_as_json_object(parsed)
            if rewritten is not parsed:
                body = json.dumps(rewritten).encode()
                headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
                scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)


async def _send_server_info(send: Send) -> None:
    raw = os.environ.get(SERVER_INFO_ENV)
    status, body = (200, raw.encode()) if raw else (404, b'{"detail": "no server info"}')
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _replay(messages: list[Message], then: Receive) -> Receive:
    """A ``receive`` that hands out ``messages`` first, then the server's own (a disconnect)."""
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        return await then()

    return receive


def patch_json_schema_requests() -> None:
    """Wrap the app the llama-cpp-python server builds in :class:`OpenAIJsonSchema` (idempotent)."""
    import llama_cpp.server.__main__ as server_module

    create_app = server_module.create_app
    if getattr(create_app, "_construct_eval_json_schema", False):
        return

    def create_wrapped_app(*args: Any, **kwargs: Any) -> OpenAIJsonSchema:
        return OpenAIJsonSchema(create_app(*args, **kwargs))

    create_wrapped_app._construct_eval_json_schema = True  # type: ignore[attr-defined]
    server_module.create_app = create_wrapped_app  # type: ignore[assignment]


PARENT_PID_ENV = "CONSTRUCT_EVAL_PARENT_PID"
"""The pid of the process that started this server (:class:`~construct_eval.serving.models.LocalServer`)."""


def watch_parent(interval_s: float = 2.0, grace_s: float = 10.0) -> threading.Thread | None:
    """End this process once the one that started it (:data:`PARENT_PID_ENV`) is gone.

    The server runs in a session of its own so that a Ctrl-C in a terminal does not reach it
    before its owner stops it; but an owner killed outright (a notebook kernel at a test's
    timeout, ``kill -9``) never stops it, and the orphan would keep the port and the cores.
    Checked every ``interval_s``: the parent pid changes when the parent dies; then SIGTERM (the
    server shuts down cleanly), and after ``grace_s`` without exiting, an immediate exit."""
    raw = os.environ.get(PARENT_PID_ENV)
    if not raw:
        return None
    parent = int(raw)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval_s)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace_s)
        os._exit(0)

    thread = threading.Thread(target=watch, name="construct-eval-parent-watch", daemon=True)
    thread.start()
    return thread


def main() -> None:
    watch_parent()
    patch_logprob_ranking()
    patch_prompt_logits()
    patch_json_string_grammar()
    patch_json_schema_requests()
    from llama_cpp.server.__main__ import main as server_main

    server_main()


if __name__ == "__main__":
    main()
