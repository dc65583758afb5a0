"""The judge study's state, from the stored tables of its run (no model calls, no recomputation).

    .venv/bin/python -m construct_eval.studies.judge_study_report > results/runs/judge_study.md

Qwen2.5-Coder-1.5B judging 600 financial-entity sentences with planted errors: how far the
runs are against the targets, every scorer against the forced written rating (paired AUROC
difference on the items both scored, Holm across each table; the comparison fixed before
looking), and what each well-populated rating value means. ``analyse_all.sh`` remakes the
tables and this file; ``tests/test_results_scripts.py`` checks that the file is what this prints.
"""

from __future__ import annotations

import math
from pathlib import Path

from construct_eval.csv_tables import read_rows
from construct_eval.numbers import interval
from construct_eval.reports.tables import file_slug
from construct_eval.stats.calibration import FEW_ITEMS, describe_values
from construct_eval.studies import RUNS
from construct_eval.studies.notebook_words import document
from construct_eval.types import ScorerId

RUN = RUNS / "financial_ner-sample600-controlled30"
GENERATED = RUNS / "financial_ner-sample200"  # part 5: errors a generator really made
SYNTHETIC = RUNS / "synthetic200-controlled30"  # part 6
DEFAULT_ORDER = "judge-doc[sec:r-s-o|fields:original]"  # the forced rating's name once other orders exist
FREE = "judge-doc[sec:r-s-o|fields:original|ask:free]"  # the card's free recipe, same prompt order
TARGETS = {"sentences": 500, "wrong documents": 120, "right documents": 120, "wrong fields": 300}
MIN_ITEMS = FEW_ITEMS  # a rating value with fewer items is listed as too few to read


def _rows(name: str, run: Path | None = None) -> list[dict[str, str]]:
    path = (run or RUN) / "metrics" / f"{name}.csv"
    if not path.exists():
        return []
    return read_rows(path)


def _f(text: str | None) -> float:
    try:
        return float(text) if text not in (None, "") else math.nan
    except ValueError:
        return math.nan


def _display(scorer: str) -> str:
    """A scorer's short label (a combination as its method and member count, the default section
    order left out), its pipes escaped for a Markdown table cell."""
    return ScorerId.parse(scorer).display.replace("|", "\\|")


def _ci(value: str, low: str, high: str) -> str:
    v, lo, hi = _f(value), _f(low), _f(high)
    if math.isnan(v):
        return "-"
    return interval(v, lo, hi)


def reference(detection: list[dict[str, str]]) -> str:
    """The forced document rating's name: plain until a second prompt order is judged."""
    return DEFAULT_ORDER if any(r["scorer"] == DEFAULT_ORDER for r in detection) else "judge-doc"


def progress(detection: list[dict[str, str]]) -> list[str]:
    by = {(r["level"], r["scorer"]): r for r in detection}
    doc, field = by.get(("document", reference(detection))), by.get(("field", "judge-field"))
    if not doc or not field:
        return []
    n_doc, wrong_doc = int(_f(doc["n"])), int(_f(doc["positives"]))
    have = {
        "sentences": n_doc,
        "wrong documents": wrong_doc,
        "right documents": n_doc - wrong_doc,
        "wrong fields": int(_f(field["positives"])),
    }
    lines = ["| target | needed | judged so far | met |", "|---|---|---|---|"]
    for name, need in TARGETS.items():
        lines.append(f"| {name} | {need} | {have[name]} | {'yes' if have[name] >= need else 'not yet'} |")
    return lines


def comparison(level: str, detection: list[dict[str, str]], reference: str, run: Path | None = None) -> list[str]:
    paired = {r["a"]: r for r in _rows(f"paired_{level}_{file_slug(reference)}", run)}
    lines = [
        "| scorer | n | wrong | AUROC [95%] | rating use | minus the forced rating [95%] | Holm p | the interval allows |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in (r for r in detection if r["level"] == level):
        name = _display(r["scorer"]) + (" (uses labels)" if r.get("uses_labels", "").lower() == "true" else "")
        p = paired.get(r["scorer"])
        if r["scorer"] == reference:
            diff, holm, allows = "(reference)", "", ""
        elif p and p.get("difference"):
            holm = _boot_p(p["p_holm"])
            diff = _ci(p["difference"], p["low"], p["high"])
            allows = p["ranking"].replace(p["a"], _display(p["a"]))
        else:
            diff, holm, allows = "-", "", "not paired"
        weak = " (underpowered)" if r.get("underpowered") else ""
        lines.append(
            f"| `{name}` | {r['n']} | {r['positives']} | {_ci(r['auroc'], r['auroc_low'], r['auroc_high'])}{weak}"
            f" | {r.get('rating_use') or ''} | {diff} | {holm} | {allows} |"
        )
    return lines


def _n(detection: list[dict[str, str]], level: str, pick) -> int:
    """Items judged: scored, plus those the judge answered without a readable score (unscored)."""
    return sum(
        int(_f(r["n"])) + int(_f(r.get("unscored") or "0"))
        for r in detection
        if r["level"] == level and pick(r["scorer"])
    )


def parts(detection: list[dict[str, str]]) -> list[str]:
    """How far each part of the study is, from the rows its tables hold."""
    generated = [r for r in _rows("detection", GENERATED) if r["level"] == "field"]
    synthetic = _rows("detection", SYNTHETIC)
    ref = reference(detection)
    done = [
        ("1", "forced rating, document + 7 fields", _n(detection, "document", lambda s: s == ref), 600),
        (
            "2",
            "free recipe, document",
            _n(detection, "document", lambda s: s == FREE),
            600,
        ),
        (
            "3",
            "forced, fields reversed",
            _n(detection, "document", lambda s: s == "judge-doc[sec:r-s-o|fields:reversed]"),
            200,
        ),
        (
            "3",
            "forced, output before document",
            _n(detection, "document", lambda s: s == "judge-doc[sec:o-s-r|fields:original]"),
            200,
        ),
        ("4", "P(correct), document", _n(detection, "document", lambda s: s == "p-correct"), 200),
        ("4", "P(correct), fields", _n(detection, "field", lambda s: s == "p-correct@top"), 1400),
        (
            "5",
            "forced, per field, generated outputs (fields)",
            _n(generated, "field", lambda s: s == "judge-field"),
            1400,
        ),
        ("6", "forced, document, synthetic", _n(synthetic, "document", lambda s: s == "judge-doc"), 200),
    ]
    lines = ["| part | what | judged | of | state |", "|---|---|---|---|---|"]
    for part, what, n, of in done:
        state = "done" if n >= of else ("not started" if n == 0 else "in progress")
        lines.append(f"| {part} | {what} | {n} | {of} | {state} |")
    return lines


def kind_pairs(run: Path | None = None) -> list[str]:
    """Each field scorer against the forced field rating within each output kind (one Holm family)."""
    rows = _rows("paired_field_judge-field_by_output_kind", run)
    if not rows:
        return []
    lines = [
        "| fields | scorer | n | AUROC | the forced rating's AUROC | difference [95%] | Holm p | the interval allows |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if not r.get("difference"):
            lines.append(f"| {r['fields']} | `{_display(r['a'])}` | {r['n']} | - | - | - | | {r.get('note', '')} |")
            continue
        lines.append(
            f"| {r['fields']} | `{_display(r['a'])}` | {r['n']} | {_f(r['auroc_a']):.3f} | {_f(r['auroc_b']):.3f}"
            f" | {_ci(r['difference'], r['low'], r['high'])} | {_boot_p(r['p_holm'])}"
            f" | {r['ranking'].replace(r['a'], _display(r['a']))} |"
        )
    return lines


def output_kinds() -> list[str]:
    rows = _rows("detection_by_output_kind")
    if not rows:
        return []
    lines = [
        "| scorer | fields | n | wrong | AUROC [95%] | minus the raw pooled AUROC [95%] | minus the field prior [95%] |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        auroc = (
            _ci(r.get("auroc", ""), r.get("auroc_low", ""), r.get("auroc_high", ""))
            if r.get("auroc")
            else r.get("note", "-")
        )
        diff, prior = (
            _ci(r.get(k, ""), r.get(f"{k}_low", ""), r.get(f"{k}_high", "")) for k in ("minus_pooled", "minus_prior")
        )
        lines.append(
            f"| `{_display(r['scorer'])}` | {r['fields']} | {r['n']} | {r['wrong']} | {auroc}"
            f" | {'' if diff == '-' else diff} | {'' if prior == '-' else prior} |"
        )
    return lines


def order_effects() -> list[str]:
    lines = []
    for value, what in (("", "written rating"), ("_expected_rating", "expected rating")):
        rows = _rows(f"bias_pairs_doc{value}")
        if not rows:
            continue
        if not lines:
            lines += [
                "| value | order against the default | n | mean shift [95%] | share changed | Wilcoxon Holm p | sign Holm p | weighted kappa | AUROC difference [95%] |",
                "|---|---|---|---|---|---|---|---|---|",
            ]
        for r in rows:
            order = (
                r["variant_b"]
                .replace("sec:r-s-o|fields:reversed", "fields reversed")
                .replace("sec:o-s-r|fields:original", "output before document")
            )
            shift = _ci(r["mean_shift"], r["shift_low"], r["shift_high"])
            kappa = "-" if math.isnan(_f(r.get("weighted_kappa"))) else f"{_f(r['weighted_kappa']):.3f}"
            diff = _ci(r.get("auroc_diff", ""), r.get("auroc_diff_low", ""), r.get("auroc_diff_high", ""))
            lines.append(
                f"| {what} | {order} | {r['n']} | {shift} | {_f(r['share_changed']):.3f} | {_p(r.get('wilcoxon_p_holm'))}"
                f" | {_p(r.get('sign_p_holm'))} | {kappa} | {diff} |"
            )
    return lines


def forced_and_free() -> list[str]:
    """The forced rating against the card's free recipe on the documents asked both ways."""
    lines = []
    for value, what in (("", "written rating"), ("_expected_rating", "expected rating")):
        for r in _rows(f"elicitation_pairs_doc{value}"):
            if not lines:
                lines += [
                    "| value | n | scale use, forced | scale use, free | mean shift, free minus forced [95%] | share changed"
                    " | Wilcoxon p | weighted kappa | AUROC free minus forced [95%] |",
                    "|---|---|---|---|---|---|---|---|---|",
                ]
            kappa = "-" if math.isnan(_f(r.get("weighted_kappa"))) else f"{_f(r['weighted_kappa']):.3f}"
            diff = _ci(r.get("auroc_diff", ""), r.get("auroc_diff_low", ""), r.get("auroc_diff_high", ""))
            use = (r.get("use_a", ""), r.get("use_b", "")) if not value else ("", "")
            lines.append(
                f"| {what} | {r['n']} | {use[0]} | {use[1]} | {_ci(r['mean_shift'], r['shift_low'], r['shift_high'])}"
                f" | {_f(r['share_changed']):.3f} | {_p(r.get('wilcoxon_p'))} | {kappa} | {diff} |"
            )
    return lines


def _boot_p(text: str) -> str:
    """A paired-bootstrap p-value (2000 resamples): 0 means none of them crossed zero."""
    p = _f(text)
    return "< 0.0005" if p == 0 else f"{p:.3g}"


def _p(text: str | None) -> str:
    p = _f(text)
    return "-" if math.isnan(p) else ("< 0.0001" if p < 1e-4 else f"{p:.3g}")


def readings() -> list[str]:
    rows = _rows("rating_readings")
    if not rows:
        return []
    lines = [
        "| scorer | reading | n | Brier [95%] | ECE per value | Brier minus naive [95%] | Brier minus base rate [95%] |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        diff = _ci(r.get("brier_minus_naive", ""), r.get("diff_low", ""), r.get("diff_high", ""))
        base = _ci(r.get("brier_minus_base_rate", ""), r.get("base_diff_low", ""), r.get("base_diff_high", ""))
        lines.append(
            f"| `{_display(r['scorer'])}` | {r['reading']} | {r['n']} | {_ci(r['brier'], r['brier_low'], r['brier_high'])}"
            f" | {_ci(r['ece_per_value'], '', '')} | {diff if diff != '-' else ''} | {base if base != '-' else ''} |"
        )
    return lines


def verdict_mass() -> list[str]:
    rows = _rows("verdict_mass")
    if not rows:
        return []
    lines = [
        "| level | calls | scored | unscored | yes/no mass: mean | median | min | share below 0.5 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['level']} | {r['calls']} | {r['scored']} | {r['unscored']} | {_f(r['mass_mean']):.3f} | {_f(r['mass_median']):.3f}"
            f" | {_f(r['mass_min']):.3f} | {_f(r['share_mass_below_0.5']):.3f} |"
        )
    return lines


def other_run(run: Path, title: str) -> dict[str, object] | None:
    """Another dataset's section: per level, its scorers against the forced rating, the field
    rating within output kinds, and what each rating value means; None where no judge ran there."""
    detection = [
        r
        for r in _rows("detection", run)
        if r["scorer"].startswith(("judge-", "p-correct", "token_logprob", "field-prior"))
    ]
    if not any(r["scorer"].startswith("judge-") for r in detection):
        return None
    levels = [
        {"level": level, "unit": unit,
         "comparison": _lines(comparison(level, [r for r in detection if r["level"] == level], reference, run)),
         "kind_pairs": _lines(kind_pairs(run)) if level == "field" else "",
         "meaning": meanings(f"values_{level}_{file_slug(reference)}", run)}
        for level, reference, unit in (("document", "judge-doc", "documents"), ("field", "judge-field", "fields"))
        if any(r["level"] == level and r["scorer"] == reference for r in detection)
    ]  # fmt: skip
    return {"title": title, "run": run.name, "levels": levels}


def meanings(name: str, run: Path | None = None) -> list[str]:
    """What each well-populated value of a rating means, a sentence each (nothing without its table)."""
    rows = _rows(name, run)
    return describe_values(rows, MIN_ITEMS) if rows else []


def _lines(lines: list[str]) -> str:
    return "\n".join(lines)


def main() -> None:
    detection = _rows("detection")
    ref = reference(detection)
    part_lines = parts(detection)
    by = {(r["level"], r["scorer"]): r for r in detection}
    doc, field = by.get(("document", ref), {}), by.get(("field", "judge-field"), {})
    others = [
        section
        for run, title in (
            (GENERATED, "Part 5, the generated financial entities (errors a generator made)"),
            (SYNTHETIC, "Part 6, the synthetic set"),
        )
        if (section := other_run(run, title))
    ]
    print(
        document(
            "judge_study",
            finished=all("| done |" in line for line in part_lines[2:]),
            run=RUN.name,
            sentences=doc["n"] if doc and field else None,  # the forced ratings' items, from their rows
            wrong=doc.get("positives"),
            wrong_fields=field.get("positives"),
            progress=_lines(progress(detection)),
            parts=_lines(part_lines),
            documents=_lines(comparison("document", detection, ref)),
            fields=_lines(comparison("field", detection, "judge-field")),
            output_kinds=_lines(output_kinds()),
            kind_pairs=_lines(kind_pairs()),
            forced_free=_lines(forced_and_free()),
            order=_lines(order_effects()),
            mass=_lines(verdict_mass()),
            readings=_lines(readings()),
            values={
                "document": meanings(f"values_document_{file_slug(ref)}"),
                "field": meanings("values_field_judge-field"),
                "free": meanings(f"values_document_{file_slug(FREE)}"),
            },
            others=others,
        )
    )


if __name__ == "__main__":
    main()
