"""True error labels: compare a generator's output with the ground truth, per field and per document.

The rules follow the insurance-claims scorer of the paper's benchmark (docs/design.md,
"Labels"): strings compared after lower-casing and dropping punctuation and spaces; enum
values lower-cased with runs of ``-``/space turned into ``_``; dates as exact strings;
numbers as ``float(a) == float(b)``; null vs null is right and exactly one null is wrong;
a missing section makes all its ground-truth fields wrong; lists of objects are paired by
the assignment that maximises matched fields (``scipy.optimize.linear_sum_assignment``);
lists of strings are compared as sets. Each rule is a field of :class:`LabelRules`, whose
dict form is written into the run so that a label always says which rules made it.

Labels are per *leaf* of the ground truth or the output. Each carries ``path``, the
nearest path that exists in the output (what a judge rated), and ``in_output``; a judged
field at any granularity is wrong when a label at or under it is wrong
(:func:`judged_field_errors`). A document is wrong when any of its labels is wrong; an
output that does not parse is a wrong document with every ground-truth field wrong.
"""

from construct_eval.data.labels.records import (
    DATE_FORMATS,
    NOT_GENERATED_PREFIXES,
    NULL_LIKE_STRINGS,
    OUTPUT_STATES,
    DocumentLabels,
    FieldLabel,
    LabelReason,
    LabelRules,
    output_state,
)
from construct_eval.data.labels.structure import label_output, label_rows, pair_items
from construct_eval.data.labels.summary import (
    NULL_TRUTH_REASONS,
    error_index,
    judged_field_errors,
    label_summary,
    parsed_path,
)
from construct_eval.data.labels.values import compare_values, normalize_enum, normalize_string, parse_date

__all__ = [
    "DATE_FORMATS",
    "NOT_GENERATED_PREFIXES",
    "NULL_LIKE_STRINGS",
    "NULL_TRUTH_REASONS",
    "OUTPUT_STATES",
    "DocumentLabels",
    "FieldLabel",
    "LabelReason",
    "LabelRules",
    "compare_values",
    "error_index",
    "judged_field_errors",
    "label_output",
    "label_rows",
    "label_summary",
    "normalize_enum",
    "normalize_string",
    "output_state",
    "pair_items",
    "parse_date",
    "parsed_path",
]
