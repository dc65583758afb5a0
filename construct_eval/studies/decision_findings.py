"""The findings paragraph on decisions, in Markdown, from the stored decision tables only.

Every number is read from ``metrics/decision_*.csv`` of the runs and formatted here; nothing is
typed by hand. The anchors it compares with are published numbers (quoted with their source):
ExtractConf (arXiv 2606.24420) reports 99.1% field accuracy at 80% coverage on DocILE, i.e. a
field risk of 0.9% at 80% coverage, without a finite-sample guarantee; Trust or Escalate (arXiv
2407.18370) reports guaranteed human agreement at about 80% coverage.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from construct_eval.decide.selective import scorer_label
from construct_eval.decide.stored import read_table
from construct_eval.decide.thresholds import rests_on_one_item
from construct_eval.numbers import interval
from construct_eval.studies.notebook_words import say

HEADLINE_RUNS = (
    ("financial_ner-sample600-controlled30", "the judge study's main run (600 sentences, planted errors)"),
    ("financial_ner-sample200", "the generated-errors run (200 sentences, the 0.5B generator's own errors)"),
)
ANCHORS = {
    "extractconf": (0.80, 0.009, "ExtractConf: 99.1% field accuracy at 80% coverage on DocILE, no guarantee"),
    "trust_or_escalate": (0.80, None, "Trust or Escalate: guaranteed agreement with humans at about 80% coverage"),
}


def _say(sentence: str, /, *args: object, **facts: object) -> str:
    """A sentence of ``templates/decision_findings.md.j2``."""
    return say("decision_findings", sentence, *args, **facts)


def _pct(x: str | float | None, digits: int = 1) -> str:
    if x in (None, ""):
        return "-"
    return f"{100 * float(x):.{digits}f}%"


def _deployable(rows: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    return [r for r in rows if r.get("uses_labels") not in ("True", "true", "1")]


def _by_level(rows: Sequence[dict[str, str]]) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A table's rows per level, documents first; a level with no rows is skipped."""
    for level in ("document", "field"):
        mine = [r for r in rows if r["level"] == level]
        if mine:
            yield level, mine


def run_summary(run_path: Path, label: str) -> list[str]:
    """Bullet lines for one run."""
    name = Path(run_path).name
    thr = _deployable(read_table(run_path, "thresholds"))
    val = read_table(run_path, "validity")
    aurc = _deployable(read_table(run_path, "aurc"))
    ppi = _deployable(read_table(run_path, "ppi"))
    lines = [_say("run_heading", name, label)]
    for level, level_thr in _by_level(thr):
        parts = []
        for alpha in sorted({r["alpha"] for r in level_thr}, key=float):
            at = [r for r in level_thr if r["alpha"] == alpha]
            held = [r for r in at if r["threshold"] not in ("", None)]
            if held:
                best = max(held, key=lambda r: float(r["coverage"]))
                parts.append(_say("accepted", _pct(alpha, 0), _pct(best["coverage"]), scorer_label(best["scorer"])))
            else:
                needs = [
                    int(r["documents_needed"])
                    for r in at
                    if r["documents_needed"] not in ("", None)
                    and not rests_on_one_item(float(r["coverage_if_enough"]), int(r["n_items"]))
                ]
                parts.append(_say("none_holds", _pct(alpha, 0), len(at), min(needs) if needs else None))
        ns = sorted({int(r["n_documents"]) for r in level_thr})
        n = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}-{ns[-1]} (by scorer)"
        lines.append(_say("thresholds", level, n, parts))
    for level, v in _by_level(val):
        worst = max(v, key=lambda r: float(r["violation_rate"]))
        worst_pop = max(float(r["violation_rate_run_as_population"]) for r in v)
        naive = max(v, key=lambda r: float(r["naive_violation_rate"]))
        lines.append(_say("validity", level, v[0]["splits"], _pct(worst["violation_rate"]), _pct(worst_pop),
                          _pct(max(float(r["mean_coverage"]) for r in v)), _pct(naive["naive_violation_rate"]),
                          scorer_label(naive["scorer"]), _pct(naive["alpha"], 0)))  # fmt: skip
    for level, a in _by_level(aurc):
        best = min(a, key=lambda r: float(r["aurc"]))
        aurc_ci = interval(float(best["aurc"]), float(best["aurc_low"]), float(best["aurc_high"]))
        lines.append(_say("aurc", level, scorer_label(best["scorer"]), aurc_ci, f"{float(best['aurc_random']):.3f}",
                          f"{float(best['aurc_oracle']):.3f}", _pct(best["risk_at_80%"])))  # fmt: skip
    for level, p in _by_level(ppi):
        parts = []
        for n in ("50", "100", "200"):
            at = [r for r in p if r["n_labelled"] == n]
            if not at:
                continue
            best = max(at, key=lambda r: float(r["effective_labels"]))
            parts.append(_say("ppi_part", n, f"{float(best['ppi_width']):.3f}", f"{float(best['classical_width']):.3f}",
                              f"{float(best['effective_labels']):.0f}", scorer_label(best["scorer"]),
                              _pct(best["ppi_coverage"]), _pct(best["classical_coverage"])))  # fmt: skip
        lines.append(_say("ppi", level, parts))
    return lines


def anchor_comparison(root: Path, runs: Sequence[tuple[str, str]] = HEADLINE_RUNS) -> str:
    """One sentence per anchor, set against the same quantity in each headline run."""
    cov, risk, text = ANCHORS["extractconf"]
    here, guaranteed = [], []
    for name, _ in runs:
        path = root / name
        if not (path / "metrics" / "decision_aurc.csv").exists():
            continue
        fields = [r for r in _deployable(read_table(path, "aurc")) if r["level"] == "field"]
        if fields:
            best = min(fields, key=lambda r: float(r["risk_at_80%"]))
            here.append(_say("lowest_risk", _pct(best["risk_at_80%"]), name, scorer_label(best["scorer"]),
                             _pct(best["error_rate"])))  # fmt: skip
        thr = _deployable(read_table(path, "thresholds"))
        top = max((float(r["coverage"]) for r in thr if r["threshold"] not in ("", None)), default=0.0)
        guaranteed.append(_say("guaranteed", _pct(top), name))
    return _say("anchors", text, _pct(risk), _pct(cov, 0), here, ANCHORS["trust_or_escalate"][2], guaranteed)


def findings_markdown(runs_root: str | Path, runs: Sequence[tuple[str, str]] = HEADLINE_RUNS) -> str:
    """The paragraph for the README / FINDINGS: per headline run, then the anchors."""
    root = Path(runs_root)
    out = ["### From scores to decisions", "", _say("intro"), ""]
    for name, label in runs:
        path = root / name
        if not (path / "metrics" / "decision_thresholds.csv").exists():
            out.append(_say("not_yet", name))
            continue
        out.extend(run_summary(path, label))
        out.append("")
    out.append(anchor_comparison(root, runs))
    return "\n".join(out) + "\n"
