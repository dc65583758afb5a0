"""What a judge call is and what it leaves: the judge's configuration (:class:`JudgeConfig`, whose
hash is part of every judgment key), one call to make (:class:`JudgeTask`) and one rating with
everything needed to audit it (:class:`Judgment`, a line of ``judgments.jsonl``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from construct_eval.digest import sha256_hex
from construct_eval.fields import FieldPath, Granularity
from construct_eval.judging.prompts import DEFAULT_VARIANT, PromptVariant
from construct_eval.kinds import JudgeMode
from construct_eval.types import JudgeInput

CONSTRAINED = ("auto", "none", "grammar", "json")


@dataclass(frozen=True)
class JudgeConfig:
    """How to ask. ``constrained="auto"``: a grammar on llama.cpp, JSON schema for joint calls."""

    constrained: str = "auto"
    max_tokens: int = 512
    joint_max_tokens: int = 2048
    temperature: float = 0.0
    logprobs: bool = True
    top_logprobs: int = 10
    granularity: str = Granularity.TOP.value
    variant: PromptVariant = DEFAULT_VARIANT
    explanation_cap: int | None = None  # grammar only: at most this many explanation characters; 0 = rating only

    # A cap makes weak models finish instead of rambling into the token limit, but where it
    # cuts the explanation can leak into the rating (docs/design.md, "The local models and their server"). It is part
    # of the configuration signature and of every judgment's ``constrained`` label.

    def __post_init__(self) -> None:
        if self.constrained not in CONSTRAINED:
            raise ValueError(f"constrained must be one of {CONSTRAINED}")
        Granularity(self.granularity)

    def constraint_for(self, mode: JudgeMode | str, backend: str) -> str:
        if self.constrained == "auto":
            if mode == JudgeMode.FIELDS_JOINT:
                return "json"
            return "grammar" if backend == "llamacpp" else "none"
        if mode == JudgeMode.FIELDS_JOINT and self.constrained == "grammar":
            return "json"
        if self.constrained == "grammar" and backend != "llamacpp":
            raise ValueError(f"backend {backend!r} takes no grammar: use constrained='json' or 'none'")
        return self.constrained

    def signature(self) -> dict[str, Any]:
        d = asdict(self)
        d["variant"] = self.variant.id
        return d

    @property
    def hash(self) -> str:
        """Short hash of :meth:`signature`, written on every judgment (run.json keeps the full form)."""
        return sha256_hex(json.dumps(self.signature(), sort_keys=True))[:12]


@dataclass
class Judgment:
    """One rating (or unscored state) with everything needed to audit and account for it."""

    doc_id: str
    field: str
    mode: str
    rating: int | None
    status: str
    reason: str | None
    detail: str | None
    explanation: str | None
    expected_rating: float | None
    expected_mass: float | None
    raw_reply: str | None
    finish_reason: str | None
    prompt_id: str
    prompt_hash: str
    messages_hash: str
    variant: str
    constrained: str
    model: str
    base_url: str
    backend: str
    output_hash: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    attempts: int
    cached: bool
    call_id: str
    key: str
    scorer: str = "judge"
    endpoint_id: str | None = None  # what the key knows of the endpoint (llm.Endpoint.identity)
    config_hash: str | None = None  # JudgeConfig.hash; run.json's judge history maps it to the config
    granularity: str | None = None  # of the rated fields ("top", "leaf", "item"); None for a document rating
    unknown_fields: list[str] = field(default_factory=list)
    created: str = ""
    via: str | None = None  # "batch" for a reply read from a batch results file; None: a live call
    replica: str | None = None  # which replica of a fleet answered (None: one endpoint)
    reply_model: str | None = None  # batch only: the model and fingerprint the reply names
    system_fingerprint: str | None = None
    parse_rule: str | None = None  # which parsing.ParseRule read the rating (None: no reply or nothing read)

    def to_dict(self) -> dict[str, Any]:
        row = {name: getattr(self, name) for name in self.__dataclass_fields__}
        for name in ("via", "reply_model", "system_fingerprint", "replica"):  # one live endpoint: rows as they were
            if row[name] is None:
                del row[name]
        return row


@dataclass(frozen=True)
class JudgeTask:
    """One call to make: a mode, the fields it rates, and the judgment keys it will write."""

    item: JudgeInput
    mode: JudgeMode
    paths: tuple[FieldPath, ...]
    keys: tuple[str, ...]

    @property
    def key(self) -> str:
        """The call's own key: its judgment key, or for a joint call a hash of its keys (the
        engine's task key and a batch file's ``custom_id``)."""
        return self.keys[0] if len(self.keys) == 1 else "joint-" + sha256_hex("|".join(self.keys))[:24]
