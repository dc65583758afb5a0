"""What a run's labels say: error rates (:func:`label_summary`) and whether a judged field, at any
granularity, is wrong (:func:`judged_field_errors`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from construct_eval.data.labels.records import DocumentLabels, LabelReason
from construct_eval.fields import FieldPath, parse_path

NULL_TRUTH_REASONS = (
    LabelReason.BOTH_NULL,
    LabelReason.INVENTED_VALUE,
    LabelReason.INVENTED_SECTION,
    LabelReason.EXTRA_ITEM,
    LabelReason.UNPARSED_OUTPUT_NULL_TRUTH,
)
"""Label reasons of leaves whose ground truth is null or absent (a section or list item that
only the output has)."""


def label_summary(labels: Sequence[DocumentLabels]) -> dict[str, Any]:
    """Error rates of a labelled run, over the documents that were generated.

    Documents without a reply (``not_generated``) are counted with their reasons and left out
    of every rate: a request that failed is not a wrong output. Field rates are also given on
    fields whose truth is not null (an all-null reply already gets most fields of a sparse
    schema such as PII right); an unparsed output's null-truth leaves are not among them.
    """
    generated = [d for d in labels if not d.not_generated]
    fields = [f for d in generated for f in d.fields]
    nonnull = [f for f in fields if f.reason not in NULL_TRUTH_REASONS]
    docs_wrong = sum(bool(d.wrong) for d in generated)
    wrong = sum(f.wrong for f in fields)
    reasons = Counter(str(d.not_generated).split(":")[0] for d in labels if d.not_generated)
    return {
        "documents": len(generated),
        "not_generated": len(labels) - len(generated),
        "not_generated_reasons": dict(reasons),
        "documents_wrong": docs_wrong,
        "document_error_rate": docs_wrong / len(generated) if generated else 0.0,
        "unparsed": sum(d.parse_failed for d in generated),
        "fields": len(fields),
        "fields_wrong": wrong,
        "field_error_rate": wrong / len(fields) if fields else 0.0,
        "nonnull_fields": len(nonnull),
        "nonnull_fields_wrong": sum(f.wrong for f in nonnull),
        "nonnull_field_error_rate": sum(f.wrong for f in nonnull) / len(nonnull) if nonnull else 0.0,
    }


@lru_cache(maxsize=1 << 16)
def parsed_path(path: str) -> FieldPath:
    """:func:`~construct_eval.fields.parse_path`, once per distinct path text (a run repeats a
    few hundred paths over a million items)."""
    return parse_path(path)


def error_index(labels: DocumentLabels) -> dict[FieldPath, bool]:
    """Every prefix of every label path of a document (the path itself included), and whether a
    label at or under it is wrong: what :func:`judged_field_errors` looks a judged field up in.

    Built once per document (each path parsed once) and kept on ``labels`` while its ``fields``
    list is the same and as long, so scoring many fields of a document costs one lookup each.
    """
    key = (id(labels.fields), len(labels.fields))
    cached = labels._error_index
    if cached is not None and cached[:2] == key:
        return cached[2]
    index: dict[FieldPath, bool] = {}
    for f in labels.fields:
        path = parsed_path(f.path)
        for end in range(len(path) + 1):
            prefix = path[:end]
            index[prefix] = index.get(prefix, False) or f.wrong
    labels._error_index = (*key, index)
    return index


def judged_field_errors(labels: DocumentLabels, judged: Iterable[str]) -> dict[str, bool | None]:
    """For each judged field name (any granularity): True when a label at or under it is wrong.

    Labels of values found only in the ground truth (a dropped list item) sit at their
    container, so they count for a judged field only when it contains that container (a label
    is under a judged field when the field's path is a prefix of the label's). A judged field
    with no label under it gets None (nothing to compare: e.g. an empty section).
    """
    index = error_index(labels)
    return {name: index.get(parsed_path(name)) for name in judged}
