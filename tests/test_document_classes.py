"""The power rule's document counts (reports.document_classes), against counts made here."""

from __future__ import annotations

import numpy as np

from construct_eval.reports.collect import ScoredItems
from construct_eval.reports.document_classes import document_classes_table
from construct_eval.reports.output_kinds import EMPTY, VALUE


def test_documents_with_a_wrong_and_a_right_item_are_counted_per_score_and_per_kind():
    field = ScoredItems(scorer="judge-field", level="field", granularity="top")
    doc = ScoredItems(scorer="judge-doc", level="document")
    # d0: both fields wrong; d1: the filled one wrong; d2, d3: both right
    for d, wrong_empty, wrong_filled in (("d0", 1, 1), ("d1", 0, 1), ("d2", 0, 0), ("d3", 0, 0)):
        field.doc_ids += [d, d]
        field.fields += ["Company", "Person"]
        field.wrong += [wrong_empty, wrong_filled]
        field.scores += [1.0, 5.0]
        doc.doc_ids.append(d)
        doc.fields.append("")
        doc.wrong.append(int(wrong_empty or wrong_filled))
        doc.scores.append(3.0)
    field.kinds = np.array([EMPTY, VALUE] * 4)
    rows = {(r["level"], r["scorer"], r["fields"]): (r["docs_wrong"], r["docs_right"])
            for r in document_classes_table([field, doc])}  # fmt: skip
    assert rows == {
        ("field", "judge-field", ""): (2, 3),  # d1 holds a wrong and a right field: counted in both
        ("document", "judge-doc", ""): (2, 2),
        ("field", "judge-field", VALUE): (2, 2),
        ("field", "judge-field", EMPTY): (1, 3),
    }
    # outputs that cannot be rebuilt: the pooled counts only
    field.kinds = None
    assert {r["fields"] for r in document_classes_table([field, doc])} == {""}
