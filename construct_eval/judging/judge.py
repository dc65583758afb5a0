"""The LLM judge: per-document and per-field trust ratings for one structured output.

Follows the paper's judge recipe (docs/design.md, "The judge recipe"): one document-level rating, and per-field ratings either from
one call per field (the judge told to ignore the other fields) or from one joint call
returning ``{field: {"explanation", "rating"}}``. Every rating becomes a
:class:`Judgment` record, scored or unscored with a reason, with the call's cost.

:class:`Judge` is the async core; :func:`score_document`, :func:`score_fields` and
:func:`score_trustworthiness` are the sync facade (usable inside Jupyter as well). The records a
judge reads and writes (:class:`JudgeConfig`, :class:`JudgeTask`, :class:`Judgment`) are in
:mod:`construct_eval.judging.judgment` and importable from here.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from construct_eval.digest import sha256_hex
from construct_eval.fields import DOCUMENT, FieldPath, field_paths, format_path, get_at
from construct_eval.judging.judgment import CONSTRAINED, JudgeConfig, JudgeTask, Judgment
from construct_eval.judging.prompts import (
    RenderedPrompt,
    document_prompt,
    field_prompt,
    joint_fields_prompt,
    joint_reply_schema,
    rating_grammar,
    shared_context,
)
from construct_eval.kinds import JudgeMode
from construct_eval.llm.client import (
    ChatRequest,
    ChatResult,
    Endpoint,
    LLMClient,
    is_loopback_url,
    make_client,
    run_sync,
)
from construct_eval.llm.logprobs import expected_rating, joined_text
from construct_eval.parsing import (
    ParsedRating,
    Unscored,
    is_request_failure,
    parse_field_ratings,
    parse_rating,
    parse_rating_json,
)
from construct_eval.types import JudgeInput

_SINGLE_RATING_SCHEMA = {
    "type": "object",
    "properties": {"explanation": {"type": "string"}, "rating": {"type": "integer", "enum": list(range(1, 11))}},
    "required": ["explanation", "rating"],
    "additionalProperties": False,
}


class Judge:
    """Scores :class:`JudgeInput` items through an :class:`LLMClient`."""

    def __init__(self, client: LLMClient, config: JudgeConfig | None = None):
        self.client = client
        self.config = config or JudgeConfig()
        self.backend = client.endpoint.resolved_backend
        self._signature = self.config.signature()  # part of every judgment key; computed once
        self._contexts: dict[tuple[str, str], str] = {}

    # -- planning ---------------------------------------------------------------------

    def fields_of(self, item: JudgeInput) -> list[FieldPath]:
        """The field paths rated for this output, at the configured granularity."""
        return field_paths(item.schema, item.output, granularity=self.config.granularity)

    def _shared_context(self, item: JudgeInput) -> str:
        """The rendered request, schema and output, built once per document, not per call."""
        key = (item.doc_id, item.output_hash)
        ctx = self._contexts.get(key)
        if ctx is None:
            if len(self._contexts) >= 256:
                self._contexts.clear()
            ctx = self._contexts[key] = shared_context(item.request, item.schema, item.output, self.config.variant)
        return ctx

    def _prompt(self, item: JudgeInput, mode: JudgeMode, paths: Sequence[FieldPath]) -> RenderedPrompt:
        v, ctx = self.config.variant, self._shared_context(item)
        if mode == JudgeMode.DOC:
            return document_prompt(item.request, item.schema, item.output, variant=v, context=ctx)
        if mode == JudgeMode.FIELD:
            (path,) = paths
            value = get_at(item.output, path)
            return field_prompt(item.request, item.schema, item.output, path, value, variant=v, context=ctx)
        return joint_fields_prompt(item.request, item.schema, item.output, paths, variant=v, context=ctx)

    def judgment_key(self, item: JudgeInput, mode: str, field_name: str) -> str:
        """Identity of a judgment: what was judged, how, by whom. Used to resume runs.

        "By whom" is the endpoint's identity (:attr:`Endpoint.identity`): its base URL, or the
        embedded server's fingerprint, which does not change when the server restarts on
        another port.
        """
        return self._key(item.doc_id, item.output_hash, mode, field_name, self.client.endpoint.identity)

    def _key(self, doc_id: str, output_hash: str, mode: str, field_name: str, identity: str) -> str:
        payload = json.dumps(
            [doc_id, output_hash, mode, field_name, identity, self.client.endpoint.model, self._signature],
            sort_keys=True,
            ensure_ascii=False,
        )
        return sha256_hex(payload)[:24]

    def done_keys(self, rows: Iterable[Mapping[str, Any]]) -> set[str]:
        """Keys of the judgments in ``rows``, as this judge would compute them, for resuming.

        Rows written before endpoints had identities were keyed on the base URL, and the
        embedded server's URL holds a port that changes with every start. Such a row counts as
        done for an embedded-server judge when it was made on a loopback URL with the same model
        name and its stored key is what this judge's configuration gives with that URL: the
        same item, mode, field, model and configuration, only the port differs.

        A row whose request failed is not done: resuming calls it again (its new row, with the
        same key, replaces it for every reader that keeps the latest row per item).
        """
        ep = self.client.endpoint
        done: set[str] = set()
        for row in rows:
            key = row.get("key")
            if not key or is_request_failure(row.get("reason")):  # a failed call is made again
                continue
            done.add(key)
            url = row.get("base_url") or ""
            if (
                ep.is_embedded
                and not row.get("endpoint_id")
                and row.get("model") == ep.model
                and is_loopback_url(url)
                and self._key(row["doc_id"], row["output_hash"], row["mode"], row["field"], url) == key
            ):
                done.add(self._key(row["doc_id"], row["output_hash"], row["mode"], row["field"], ep.identity))
        return done

    def plan(self, item: JudgeInput, modes: Sequence[JudgeMode | str]) -> list[JudgeTask]:
        """All calls needed to score ``item`` in the given modes."""
        tasks: list[JudgeTask] = []
        for mode in modes:
            try:
                mode = JudgeMode(mode)
            except ValueError:
                raise ValueError(f"unknown mode {mode!r}; choose from {[m.value for m in JudgeMode]}") from None
            if mode == JudgeMode.DOC:
                tasks.append(JudgeTask(item, mode, (), (self.judgment_key(item, mode, DOCUMENT),)))
                continue
            paths = self.fields_of(item)
            if not paths:
                continue
            if mode == JudgeMode.FIELD:
                for p in paths:
                    tasks.append(JudgeTask(item, mode, (p,), (self.judgment_key(item, mode, format_path(p)),)))
            else:
                keys = tuple(self.judgment_key(item, mode, format_path(p)) for p in paths)
                tasks.append(JudgeTask(item, mode, tuple(paths), keys))
        return tasks

    # -- calling ----------------------------------------------------------------------

    def _request(self, mode: JudgeMode, prompt: RenderedPrompt, names: Sequence[str]) -> tuple[ChatRequest, str]:
        constraint = self.config.constraint_for(mode, self.backend)
        schema, grammar = None, None
        if mode == JudgeMode.FIELDS_JOINT and constraint == "json":
            schema = joint_reply_schema(names)
        elif constraint == "json":
            schema = _SINGLE_RATING_SCHEMA
        elif constraint == "grammar":
            grammar = rating_grammar(self.config.explanation_cap)
            if self.config.explanation_cap == 0:
                constraint = "grammar:rating-only"
            elif self.config.explanation_cap:
                constraint = f"grammar:cap{self.config.explanation_cap}"
        want_lp = self.config.logprobs
        req = ChatRequest(
            messages=prompt.messages,
            temperature=self.config.temperature,
            max_tokens=self.config.joint_max_tokens if mode == JudgeMode.FIELDS_JOINT else self.config.max_tokens,
            json_schema=schema,
            schema_name="field_ratings" if mode == JudgeMode.FIELDS_JOINT else "rating",
            grammar=grammar,
            logprobs=want_lp,
            top_logprobs=self.config.top_logprobs if want_lp else 0,
        )
        return req, constraint

    def request_for(self, task: JudgeTask) -> ChatRequest:
        """The request :meth:`run_task` would send for ``task`` (for dry runs and batch files)."""
        names = [format_path(p) for p in task.paths]
        req, _ = self._request(task.mode, self._prompt(task.item, task.mode, task.paths), names)
        return replace(req, affinity=task.item.doc_id)  # a document's calls to one replica of a fleet

    async def run_task(self, task: JudgeTask, skip_keys: frozenset[str] | set[str] = frozenset()) -> list[Judgment]:
        """Make the task's call and turn its reply into judgments (except keys in ``skip_keys``)."""
        result = await self.client.complete(self.request_for(task))
        return self.judgments_for(task, result, skip_keys)

    def judgments_for(
        self,
        task: JudgeTask,
        result: ChatResult,
        skip_keys: frozenset[str] | set[str] = frozenset(),
        *,
        via: str | None = None,
    ) -> list[Judgment]:
        """The judgments of ``task`` from its reply, however it arrived (a live call, a batch file)."""
        names = [format_path(p) for p in task.paths]
        prompt = self._prompt(task.item, task.mode, task.paths)
        _, constraint = self._request(task.mode, prompt, names)
        if task.mode == JudgeMode.FIELDS_JOINT:
            parsed_by_name, unknown = self._parse_joint(result, names)
            entries = [(n, parsed_by_name[n]) for n in names]
        else:
            parsed = self._parse_single(result, constraint)
            entries = [(names[0] if names else DOCUMENT, parsed)]
            unknown: list[str] = []
        out = []
        for (name, parsed), key in zip(entries, task.keys, strict=True):
            if key in skip_keys:
                continue
            judgment = self._judgment(task, name, parsed, result, prompt, constraint, key, list(unknown))
            if result.replica is not None:
                judgment = replace(judgment, replica=result.replica)
            if via is not None:
                judgment = replace(
                    judgment, via=via, reply_model=result.model, system_fingerprint=result.system_fingerprint
                )
            out.append(judgment)
        return out

    def _parse_single(self, result: ChatResult, constraint: str) -> ParsedRating:
        if not result.ok:
            return ParsedRating.unscored(Unscored.REQUEST_FAILED, f"{result.error}: {result.error_detail}")
        if constraint == "json":
            return parse_rating_json(result.text, result.finish_reason)
        return parse_rating(result.text, result.finish_reason)  # grammar, grammar:capN, none

    def _parse_joint(self, result: ChatResult, names: list[str]) -> tuple[dict[str, ParsedRating], list[str]]:
        if not result.ok:
            failed = ParsedRating.unscored(Unscored.REQUEST_FAILED, f"{result.error}: {result.error_detail}")
            return {n: failed for n in names}, []
        return parse_field_ratings(result.text, names, result.finish_reason)

    def _expected(self, result: ChatResult, parsed: ParsedRating, constraint: str) -> tuple[float | None, float | None]:
        if parsed.rating is None or not result.logprobs or result.text is None:
            return None, None
        text = joined_text(result.logprobs)
        reparsed = parse_rating_json(text) if constraint == "json" else parse_rating(text)
        if reparsed.span is None or reparsed.rating != parsed.rating:
            return None, None
        exp = expected_rating(result.logprobs, reparsed.span[0])
        return (exp.value, exp.mass) if exp else (None, None)

    def _judgment(
        self,
        task: JudgeTask,
        name: str,
        parsed: ParsedRating,
        result: ChatResult,
        prompt: RenderedPrompt,
        constraint: str,
        key: str,
        unknown: list[str],
    ) -> Judgment:
        ep = self.client.endpoint
        exp, mass = self._expected(result, parsed, constraint) if task.mode != JudgeMode.FIELDS_JOINT else (None, None)
        return Judgment(
            doc_id=task.item.doc_id,
            field=name,
            mode=task.mode,
            rating=parsed.rating,
            status=parsed.status,
            reason=parsed.reason,
            detail=parsed.detail,
            explanation=parsed.explanation,
            expected_rating=exp,
            expected_mass=mass,
            raw_reply=result.text,
            finish_reason=result.finish_reason,
            prompt_id=prompt.template_id,
            prompt_hash=prompt.template_hash,
            messages_hash=prompt.hash,
            variant=prompt.variant_id,
            constrained=constraint,
            model=ep.model,
            base_url=ep.normalized_url,
            backend=self.backend,
            output_hash=task.item.output_hash,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            latency_s=round(result.latency_s, 6),
            attempts=result.attempts,
            cached=result.cached,
            call_id=prompt.hash,
            key=key,
            endpoint_id=ep.identity,
            config_hash=self.config.hash,
            granularity=None if task.mode == JudgeMode.DOC else self.config.granularity,
            unknown_fields=unknown,
            parse_rule=parsed.rule,
            created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        )

    # -- convenience ------------------------------------------------------------------

    async def score_document(self, item: JudgeInput) -> Judgment:
        (task,) = self.plan(item, [JudgeMode.DOC])
        (judgment,) = await self.run_task(task)
        return judgment

    async def score_fields(self, item: JudgeInput, *, joint: bool = False) -> list[Judgment]:
        import asyncio

        tasks = self.plan(item, [JudgeMode.FIELDS_JOINT if joint else JudgeMode.FIELD])
        batches = await asyncio.gather(*(self.run_task(t) for t in tasks))
        return [j for batch in batches for j in batch]


# --------------------------------------------------------------------------- sync facade


def endpoint_from_env(base_url: str | None = None, model: str | None = None, backend: str = "auto") -> Endpoint:
    """An endpoint from arguments, else ``CONSTRUCT_EVAL_BASE_URL``/``_MODEL`` or ``OPENAI_BASE_URL``."""
    url = base_url or os.environ.get("CONSTRUCT_EVAL_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
    name = model or os.environ.get("CONSTRUCT_EVAL_MODEL")
    if not url or not name:
        raise ValueError(
            "no judge endpoint: pass base_url= and model=, or set CONSTRUCT_EVAL_BASE_URL and CONSTRUCT_EVAL_MODEL"
        )
    # an explicit backend= wins; the environment fills in only where the caller left "auto"
    if backend == "auto":
        backend = os.environ.get("CONSTRUCT_EVAL_BACKEND") or "auto"
    return Endpoint(base_url=url, model=name, backend=backend)


async def _with_judge(endpoint: Endpoint, config: JudgeConfig | None, cache: Any, fn: Any) -> Any:
    async with make_client(endpoint, cache=cache) as client:
        return await fn(Judge(client, config))


def score_document(
    input_text: str,
    schema: Mapping[str, Any] | None,
    output: Any,
    *,
    base_url: str | None = None,
    model: str | None = None,
    backend: str = "auto",
    config: JudgeConfig | None = None,
    cache: Any = True,
    doc_id: str = "doc",
) -> Judgment:
    """Rate a whole output 1-10 (sync). See :class:`Judge` for the async form."""
    item = JudgeInput(doc_id, input_text, schema, output)
    ep = endpoint_from_env(base_url, model, backend)
    return run_sync(_with_judge(ep, config, cache, lambda j: j.score_document(item)))


def score_fields(
    input_text: str,
    schema: Mapping[str, Any] | None,
    output: Any,
    *,
    joint: bool = False,
    base_url: str | None = None,
    model: str | None = None,
    backend: str = "auto",
    config: JudgeConfig | None = None,
    cache: Any = True,
    doc_id: str = "doc",
) -> list[Judgment]:
    """Rate each field 1-10 (sync): one call per field, or one joint call with ``joint=True``."""
    item = JudgeInput(doc_id, input_text, schema, output)
    ep = endpoint_from_env(base_url, model, backend)
    return run_sync(_with_judge(ep, config, cache, lambda j: j.score_fields(item, joint=joint)))


def score_trustworthiness(
    input_text: str,
    schema: Mapping[str, Any] | None,
    generated_output: Any,
    **kwargs: Any,
) -> tuple[int | None, dict[str, int | None]]:
    """The card's recipe: ``(doc_rating, {field: rating})``; ``None`` marks an unscored rating."""

    async def both(judge: Judge) -> tuple[Judgment, list[Judgment]]:
        import asyncio

        item = JudgeInput(kwargs.get("doc_id", "doc"), input_text, schema, generated_output)
        doc, fields = await asyncio.gather(judge.score_document(item), judge.score_fields(item))
        return doc, fields

    ep = endpoint_from_env(kwargs.get("base_url"), kwargs.get("model"), kwargs.get("backend", "auto"))
    doc, fields = run_sync(_with_judge(ep, kwargs.get("config"), kwargs.get("cache", True), both))
    return doc.rating, {j.field: j.rating for j in fields}


__all__ = [
    "CONSTRAINED",
    "Judge",
    "JudgeConfig",
    "JudgeInput",
    "JudgeTask",
    "Judgment",
    "endpoint_from_env",
    "score_document",
    "score_fields",
    "score_trustworthiness",
]
