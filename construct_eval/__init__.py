"""construct-eval: how far can an LLM judge be trusted when it rates structured outputs?

Public API (sync facade; :class:`construct_eval.judging.judge.Judge` is the async core)::

    from construct_eval import score_trustworthiness
    doc_rating, field_ratings = score_trustworthiness(text, schema, output,
                                                      base_url=..., model=...)
"""

from construct_eval import _compat
from construct_eval.fields import field_names, field_paths, format_path, parse_path
from construct_eval.judging.judge import (
    Judge,
    JudgeConfig,
    JudgeInput,
    Judgment,
    score_document,
    score_fields,
    score_trustworthiness,
)
from construct_eval.llm.client import Endpoint, LLMClient
from construct_eval.parsing import parse_field_ratings, parse_rating

_compat.install()  # old module paths (construct_eval.judge, ...) resolve to their new homes

__version__ = "0.1.0"

__all__ = [
    "Endpoint",
    "Judge",
    "JudgeConfig",
    "JudgeInput",
    "Judgment",
    "LLMClient",
    "field_names",
    "field_paths",
    "format_path",
    "parse_field_ratings",
    "parse_path",
    "parse_rating",
    "score_document",
    "score_fields",
    "score_trustworthiness",
]
