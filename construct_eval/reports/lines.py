"""What the command line prints about the library's reports that are still dicts: the labels
(:func:`~construct_eval.reports.collect.label_run`) and positional bias
(:func:`~construct_eval.reports.run_analyses.bias_run`, ``elicitation_run``). Kept apart from the
computing so the CLI only prints, and so a notebook can print the same lines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from construct_eval.numbers import interval


def bias_lines(report: Mapping[str, Any], across: str = "orders") -> list[str]:
    """The summary lines of a bias report; ``across`` names what was paired (``orders`` or
    ``elicitations``)."""
    paired = report["paired"]
    what = "ways of asking" if across == "elicitations" else "orders"
    out = [f"{len(paired.items)} items rated under all {len(paired.variants)} {what} ({paired.dropped} incomplete)"]
    for r in report["pairs"]:
        if "mean_shift" in r:
            out.append(
                f"  {r['variant_b']:40s} shift {interval(r['mean_shift'], r['shift_low'], r['shift_high'], spec='+.3f', bounds='+.3f')}"
                f"  wilcoxon p={r['wilcoxon_p']:.3g} (Holm {r['wilcoxon_p_holm']:.3g})"
                f"  agree {r['exact_agreement']:.1%}  within one {r['within_one']:.1%}"
                + (f"  scale {r['use_a']} -> {r['use_b']}" if "use_a" in r else "")
            )
    if "friedman" in report:
        out.append(f"  Friedman across {report['friedman']['variants']} orders: p={report['friedman']['p']:.3g}")
    if "position" in report:
        e = report["position"]
        out.append(f"  position effect (first -> last): {interval(e.slope, e.low, e.high, spec='+.3f', bounds='+.3f')}")
    for r in report.get("debiasing", []):
        out.append(f"  {r['score']:40s} AUROC {r.get('auroc', float('nan')):.3f}  calls/item {r['calls_per_item']}")
    return out


def label_lines(summary: Mapping[str, Any], labels_file: Any) -> list[str]:
    """The lines of a :func:`~construct_eval.reports.collect.label_run` summary: documents and
    fields wrong (overall and on non-null truth), the other reading of null-like strings, the
    documents not generated, and where the labels were written."""
    s = summary
    out = [
        f"{s['documents']} documents: {s['documents_wrong']} wrong ({s['document_error_rate']:.1%}),"
        f" {s['unparsed']} unparsed; leaf fields wrong {s['field_error_rate']:.1%}"
        f" ({s['fields_wrong']}/{s['fields']}); on non-null truth {s['nonnull_field_error_rate']:.1%}"
        f" ({s['nonnull_fields_wrong']}/{s['nonnull_fields']})"
    ]
    other = s.get("other_reading")
    if other:
        out.append(
            f"with null-like strings {other['null_like_strings']} read as null: {other['documents_wrong']} wrong"
            f" documents, leaf fields wrong {other['field_error_rate']:.1%} ({other['fields_wrong']}/{other['fields']});"
            f" written to labels_other_reading.jsonl"
        )
    if s["not_generated"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in s["not_generated_reasons"].items())
        out.append(
            f"{s['not_generated']} more documents were not generated ({reasons}):"
            " left out of every rate (a request that failed is not a wrong output)"
        )
    out.append(f"labels written to {labels_file} (rules {s['rules_hash']})")
    return out
