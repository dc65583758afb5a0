"""The tables notebook 07 (natural errors) shows, each read from a stored table of the study run.

Notebook 07 asks the paper's question on errors a generator really made; these functions turn the
run's stored tables (``metrics/*.csv`` and the audit files the reports read) into the short Markdown
tables it shows, so that the notebook's cells stay short. Every number is read from a table cell;
nothing here computes a new statistic. Each function takes the run's folder; those that link a
stored table take ``link(name, text)`` from the notebook, which knows where it is executed.

    from construct_eval.studies import natural_notebook as nn
    nn.comparison_table(run, "document", link)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from construct_eval import RunDir
from construct_eval.csv_tables import read_rows
from construct_eval.decide.thresholds import NEED_LIMIT, quoted_need, rests_on_one_item
from construct_eval.display.style import model_label
from construct_eval.numbers import interval
from construct_eval.reports.run_analyses import base_rate_run
from construct_eval.reports.tables import markdown_table
from construct_eval.scorer_labels import display_name
from construct_eval.studies import natural_error_patterns, natural_judging, natural_pilots_report
from construct_eval.studies.notebook_words import say

FORCED = "grammar:rating-only"
"""How the run's judge was first asked: the rating forced alone (a name without "free" means this)."""

PER_FIELD_JUDGE = "judge rating (JSON schema), per field"
"""The one name of the judge that rates every top-level field in one call (explanation, then rating):
the CONSTRUCT figure's, so figure, tables and text call it the same."""

NAMES = {
    "combo:rank-mean[consistency:mean+reflection]": "rank combination of reflection ensemble and self-consistency (not CONSTRUCT)",
    "combo:rank-mean[consistency@top+reflection@top]@top": "rank combination of reflection ensemble and self-consistency (not CONSTRUCT)",
    "fitted-oof-uses-labels[consistency:mean+reflection]": "reflection ensemble and self-consistency fitted to the labels (uses labels)",
    "fitted-oof-uses-labels[consistency@top+reflection@top]@top": "reflection ensemble and self-consistency fitted to the labels (uses labels)",
    "judge-joint[sec:r-s-o|fields:original|ask:json]": PER_FIELD_JUDGE,
    "judge-joint[sec:r-s-o|fields:original|ask:json]:min": PER_FIELD_JUDGE + ", least over fields",
}
"""Scores whose package name is long or internal, in the words the notebook uses."""

METHOD_NAMES = {
    "LLM judge per field": PER_FIELD_JUDGE,
    "per-field judge, explanation then rating (one call)": PER_FIELD_JUDGE,
    "LLM judge per field, rating forced alone": "LLM judge per field, rating forced alone (one call per field)",
}
"""The paper table's and the cost table's method names, mapped to the notebook's one name per method."""


def table(run: Path, name: str) -> list[dict[str, str]]:
    """A stored table of the run (``metrics/<name>.csv``) as rows of strings."""
    return read_rows(Path(run) / "metrics" / f"{name}.csv")


def num(x: object) -> float:
    """A table cell as a float; an empty cell is NaN."""
    return float(x) if x not in ("", None) else float("nan")  # type: ignore[arg-type]


def ci(row: dict[str, str], col: str = "auroc", sign: str = "") -> str:
    """A cell with its 95% interval (the ``_low`` / ``_high`` columns), to three decimals."""
    low, high = num(row.get(col + "_low")), num(row.get(col + "_high"))
    return interval(num(row[col]), low, high, spec=f"{sign}.3f")


def score_name(scorer: str) -> str:
    """A scorer id in the notebook's words."""
    return NAMES.get(scorer) or display_name(scorer, elicitation=FORCED)


def method_name(method: str) -> str:
    """A method of the paper table or the cost table in the notebook's words."""
    return METHOD_NAMES.get(method, method)


def counts(run: Path) -> dict[str, int]:
    """How many notices each part of the comparison rests on, read from the stored tables.

    ``judged``: notices CONSTRUCT was run on (scored and unscored, in the paper table); ``scored``:
    those it scored (the paper table's ``scored``); ``construct``/``construct_wrong``: those of them the
    judge per notice rated too (the paired table's row); ``construct_unscored``: those whose CONSTRUCT
    reply could not be read; ``document``/``document_wrong``: notices every method of the paper table scored;
    ``field_notices``/``fields``/``fields_wrong``: the same per top-level field."""
    paper = table(run, "paper_comparison")
    doc = next(r for r in paper if r["level"] == "document" and r.get("n"))
    field = next(r for r in paper if r["level"] == "field" and r.get("n"))
    construct_doc = next(r for r in paper if r["level"] == "document" and r["key"] == "construct")
    judged = int(construct_doc["scored"]) + int(construct_doc.get("unscored") or 0)
    paired = {r["a"]: r for r in table(run, "paired_document_judge-doc")}
    return {
        "judged": judged,
        "scored": int(construct_doc["scored"]),
        "construct": int(paired["construct"]["n"]),
        "construct_wrong": int(paired["construct"]["positives"]),
        "construct_unscored": int(construct_doc.get("unscored") or 0),
        "document": int(doc["n"]),
        "document_wrong": int(doc["wrong"]),
        "field_notices": int(field["documents"]),
        "fields": int(field["n"]),
        "fields_wrong": int(field["wrong"]),
    }


def counts_sentence(run: Path) -> str:
    """The one statement of how many notices each method scored."""
    return _say("counts", counts(run))


def _common_reason(reasons: list[str]) -> str:
    """The part of the rows' underpowered reasons that every row shares (the class counts)."""
    first = [r.split("; ")[0] for r in reasons]
    return first[0] if len(set(first)) == 1 else "; ".join(dict.fromkeys(first))


def _say(sentence: str, /, *args: object, **facts: object) -> str:
    """A sentence of ``templates/natural_notebook.md.j2``."""
    return say("natural_notebook", sentence, *args, **facts)


def _difference(r: dict[str, str], col: str) -> str:
    if not r.get(f"{col}_diff"):
        return "-"
    ranking = r.get(f"{col}_ranking", "")
    low, high = num(r.get(f"{col}_diff_low")), num(r.get(f"{col}_diff_high"))
    allows = (
        "above"
        if ranking.endswith(" higher")
        else "below"
        if ranking.endswith(" lower")
        else ("underpowered" if "underpowered" in ranking else "holm")
        if low > 0 or high < 0  # the unadjusted interval excludes 0, but no ranking is allowed
        else ""
    )
    family = r.get(f"{col}_holm_family", "")
    return _say("difference", ci(r, f"{col}_diff", "+"), num(r[f"{col}_p_holm"]), family, allows)


def figure_name(row: dict[str, str]) -> str:
    """A paper-table row's method as the CONSTRUCT figure above it names it (one name per method in
    figure and table); a method the figure does not draw keeps the table's name."""
    from construct_eval.paper.comparison_plot import PAPER_LABELS, PER_OUTPUT_MARK

    label = PAPER_LABELS.get(row.get("key", ""))
    if label is None:
        return method_name(row["method"])
    return label.replace("\n", " ").replace(PER_OUTPUT_MARK, "")


def answer_markdown(what: str, answer: str, also: Sequence[str]) -> str:
    """The notebook's answer: the figure's question, the answer per level in bold ("Per output, no;
    per field, no."), the caption's ``answer`` (the rankings after Holm, the AUROCs and their n)
    and its next sentence (the setting), then the caption's other sentences (``also``, as the
    manifest stores them) folded under "What else the figure shows", one bullet each; each sentence
    said once. The whole caption as the answer was about 300 words before the first table."""
    first, rest = answer, list(also)
    verdicts = [c.split(":")[0] for c in first.rstrip(".").split("; ") if ":" in c and c.lower().startswith("per ")]
    said = _say("answer", what, verdicts, first, rest[0] if rest else "")
    if len(rest) > 1:
        said += (f"\n\n<details><summary>{_say('more_notes', len(rest) - 1)}</summary>\n\n"
                 + "".join(f"- {s}\n" for s in rest[1:]) + "\n</details>")  # fmt: skip
    return said


def comparison_table(run: Path, level: str, link: Callable[[str, str], str]) -> str:
    """The paper's table at one level: each method on the items every method of the level scored, its
    precision and recall when the lowest-scored 20% are reviewed, and CONSTRUCT minus it (paired;
    Holm within its family, named on the row: CONSTRUCT's AUROC against the paper's three baselines,
    or the other tests)."""
    rows = [r for r in table(run, "paper_comparison") if r["level"] == level]
    scored = [r for r in rows if r.get("auroc")]
    n = int(scored[0]["n"])
    unit = "notices" if level == "document" else "fields"
    head = ["method", "items (wrong)", "AUROC [95% CI]"]
    head.append(f"precision / recall, 20% reviewed ({round(0.2 * n)} {unit})")
    head += ["CONSTRUCT minus it, AUROC", "CONSTRUCT minus it, recall at 20%"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in scored:
        cells = [
            figure_name(r),
            f"{int(r['n']):,} ({int(r['wrong']):,})",
            ci(r) + (" (one value: chance)" if r.get("one_value") else ""),
        ]
        cells.append(
            "as a random review" if r.get("one_value") else f"{ci(r, 'precision@20%')} / {ci(r, 'recall@20%')}"
        )
        cells.append(_difference(r, "auroc"))
        cells.append(_difference(r, "recall@20%"))
        lines.append("| " + " | ".join(cells) + " |")
    weak = [r for r in scored if r.get("underpowered")]
    text = _say("heading", level, link("paper_comparison", "stored table: also the 10% budget")) + "\n\n"
    text += "\n".join(lines)
    if len(weak) == len(scored):
        text += "\n\n" + _say("all_underpowered", _common_reason([r["underpowered"] for r in weak]))
    elif weak:
        text += "\n\n" + _say("some_underpowered", [(method_name(r["method"]), r["underpowered"]) for r in weak])
    return text


def construct_twins(run: Path) -> str:
    """Why the two CONSTRUCT rows rank the notices the same, with their paired difference."""
    r = next(r for r in table(run, "paper_comparison") if r["level"] == "document" and r["key"] == "construct-gen")
    same = num(r["auroc_diff"]) == num(r["auroc_diff_low"]) == num(r["auroc_diff_high"]) == 0
    return _say("twins", same, ci(r, "auroc_diff", "+"))


def how_asked(run: Path) -> str:
    """One line per method of the paper table: how it was asked (per notice)."""
    rows = [r for r in table(run, "paper_comparison") if r["level"] == "document" and r.get("asked")]
    return "\n".join(f"- {method_name(r['method'])}: {r['asked']}" for r in rows)


def every_score_table(run: Path, level: str) -> str:
    """Every score against chance at one level, grouped by how many items it scored (most first), so rows
    on a few notices are not read as a ranking among rows on hundreds. The judge's forced rating, the
    table's reference, gave every item one value: each paired difference is the score's AUROC minus 0.5."""
    ref = "judge-doc" if level == "document" else "judge-field"
    rows = [r for r in table(run, f"paired_{level}_{ref}") if not r["a"].endswith("@leaf")]
    lines = ["| score | AUROC [95% CI] | above chance, after Holm? |", "|---|---|---|"]
    groups: dict[int, list[dict[str, str]]] = {}
    for r in rows:
        groups.setdefault(int(r["n"]), []).append(r)
    for n, group in sorted(groups.items(), key=lambda kv: -kv[0]):
        wrong = {int(r["positives"]) for r in group}
        unit = "notices" if level == "document" else "fields"
        lines.append(f"| **on {n:,} {unit}** ({'/'.join(map(str, sorted(wrong)))} wrong) | | |")
        for r in sorted(group, key=lambda r: -num(r["auroc_a"])):
            ranking = r["ranking"].removeprefix("none: ")
            if r["ranking"].endswith(" higher"):
                verdict = "yes"
            elif r["ranking"].endswith(" lower"):
                verdict = "below"
            elif ranking.startswith("underpowered"):
                verdict = "underpowered"
            elif ranking == "the interval holds 0":
                verdict = "no: its interval holds 0.5"
            else:
                verdict = "not after Holm's correction"
            lines.append(
                f"| {score_name(r['a'])} | {num(r['auroc_a']):.3f} "
                f"[{0.5 + num(r['low']):.3f}, {0.5 + num(r['high']):.3f}] | {verdict} |"
            )
    return "\n".join(lines)


def thresholds_table(run: Path) -> tuple[str, str]:
    """The auto-accept thresholds (Learn-then-Test) as a compact table, and a sentence on the rest.

    The table holds, per level and alpha, each deployable score that earns a threshold accepting some
    but not all items (share accepted, risk bound), and each that earns none but would with more
    labelled notices (how many, marked where the count is extrapolated from its single most trusted
    notice). The sentence counts the pairs that accept everything (alpha above the share wrong: a
    threshold that decides nothing) and those for which more labels would not help."""
    rows = [
        r for r in table(run, "decision_thresholds") if r.get("uses_labels") != "True" and r["alpha"] in ("0.1", "0.05")
    ]
    lines = [
        "| level | alpha | score | share accepted | risk bound | labelled notices | labels it would need |",
        "|---|---|---|---|---|---|---|",
    ]
    everything = never = 0
    single = False
    for r in sorted(rows, key=lambda r: (r["level"], -num(r["alpha"]), -num(r["coverage"]))):
        coverage, have = num(r["coverage"]), int(r["n_documents"])
        level = "notice" if r["level"] == "document" else "field"
        alpha = f"{100 * num(r['alpha']):.0f}%"
        if 0 < coverage < 1:
            lines.append(
                f"| {level} | {alpha} | {score_name(r['scorer'])} | {100 * coverage:.1f}% "
                f"| {100 * num(r['risk_bound']):.1f}% | {have:,} | - |"
            )
        elif coverage == 1:
            everything += 1
        elif r.get("documents_needed"):
            need = quoted_need(num(r["documents_needed"]))
            one = rests_on_one_item(num(r["coverage_if_enough"]), int(r["n_items"]))
            single |= one
            whole = num(r["coverage_if_enough"]) >= 0.9995  # it would accept every item: a threshold deciding nothing
            words = (
                "not estimable *"
                if one
                else f"about {need:,}, to accept every item (deciding nothing)"
                if whole
                else f"about {need:,} (at {100 * num(r['coverage_if_enough']):.1f}% accepted)"
            )
            lines.append(f"| {level} | {alpha} | {score_name(r['scorer'])} | none | - | {have:,} | {words} |")
        elif r.get("more_labels") == "beyond the limit":
            lines.append(
                f"| {level} | {alpha} | {score_name(r['scorer'])} | none | - | {have:,} | more than {NEED_LIMIT} x {have:,} |"
            )
        else:
            never += 1
    return "\n".join(lines), _say("thresholds_rest", everything, never, single)


def calibration_summary(run: Path) -> tuple[int, int]:
    """On how many calibrated scores (of how many) both maps, isotonic and Platt fitted out of fold,
    predict worse than the base rate of the same folds (Brier, to three decimals)."""
    by_score: dict[tuple[str, str], dict[str, dict[str, str]]] = {}
    for r in table(run, "calibration"):
        by_score.setdefault((r["level"], r["scorer"]), {})[r["method"]] = r
    base = {(r["level"], r["scorer"]): r for r in base_rate_run(RunDir(Path(run), create=False))}
    worse = []
    for key, methods in by_score.items():
        if "uses-labels" in key[1] or "isotonic" not in methods:
            continue
        best = min(num(methods["isotonic"]["brier"]), num(methods.get("platt", {}).get("brier")))
        worse.append(round(best, 3) > round(base[key]["brier_base_rate"], 3))
    return sum(worse), len(worse)


def pilots_table(runs: Path) -> str:
    """Each natural-error pilot and study run: generator, prompt, documents and error rate."""
    prompts = {"benchmark": "the benchmark's instructions", "package": "the package's prompt"}
    datasets = {
        "financial_ner": "financial entities",
        "synthetic": "synthetic documents",
        "data_table_rebuild": "data tables (rebuilt offline from public CSVs)",
    }
    out = []
    for path in sorted(Path(runs).glob("natural-*/run.json")):
        r = natural_pilots_report.pilot_row(path.parent)
        dataset = datasets.get(str(r["dataset"]), str(r["dataset"]))
        if "shipping_notice_v2" in path.parent.name:
            dataset = "shipping notices, version 2 (the study set)"
        elif "shipping_notice" in path.parent.name:
            dataset = "shipping notices, version 1"
        kind = r["kind"] if r["kind"] == "pilot" or "shipping_notice_v2" in path.parent.name else "study run, stopped"
        out.append(
            {
                "kind": kind,
                "dataset": dataset,
                "generator": model_label(str(r["generator"])),
                "prompt": prompts.get(str(r["prompt"]), r["prompt"]),
                "documents": r["n"],
                "wrong": r["wrong"],
                "error rate [95% CI]": r["document error rate [95% CI]"],
                "in 25-75%": r["in 25-75%"],
            }
        )
    return markdown_table(out)


PHRASINGS = {
    "`salutation`": "in the greeting (Dear NAME,)",
    "`attention`": "on an Attn: line",
    "`contact_line`": "on a delivery-contact line",
    "`hand_over`": "in a hand-over request",
    "`signs`": "signing the notice",
}


def phrasing_table(run: Path) -> tuple[str, list[dict[str, object]]]:
    """How each notice names its contact and how often the generator then got the contact (and the
    notice) wrong, as Markdown, with the rows."""
    key = "how the notice names the contact"
    contact = f"`{natural_error_patterns.CONTACT}` wrong"
    rows = [
        {
            key: PHRASINGS.get(str(r[key]), r[key]),
            **{("contact field wrong" if k == contact else k): v for k, v in r.items() if k not in ("run", key)},
        }
        for r in natural_error_patterns.phrasing_rows(Path(run))
    ]
    return markdown_table(rows), rows


def cost_table(run: Path) -> str:
    """Model seconds per notice for each method (median of the sum of a notice's calls)."""
    rows = natural_judging.judging_rows(Path(run))
    return markdown_table(
        [
            {
                "method": method_name(str(r["method"]).split(" ", 1)[1]),
                # a notice stopped in the middle of its calls is counted here, not among those scored
                "notices": f"{r['documents']:,}" + (f" ({k} partial)" if (k := r.get("partial documents")) else ""),
                "calls": f"{r['calls']:,}",
                "model s/notice (median)": r["model s/doc (median)"],
            }
            for r in rows
            if r["calls"] != "-"
        ]
    )


# --------------------------------------------------------------------------- the notebook's sections


def linker(run: Path, out_dir: str | Path) -> Callable[..., str]:
    """``link(name, text=None)``: a Markdown link to the run's stored table ``metrics/<name>.md``,
    relative to where the executed notebook lives (``out_dir``'s parent)."""
    from construct_eval.studies.notebook_figures import notebook_link

    here = Path(out_dir).resolve().parent

    def link(name: str, text: str | None = None) -> str:
        return f"[{text or name}]({notebook_link(Path(run) / 'metrics' / f'{name}.md', here)})"

    return link


def answer(run: Path, figures: Path, out_dir: str | Path, width: int = 800) -> list[object]:
    """The notebook's answer, to ``display(*...)``: the CONSTRUCT figure of the paper set
    (``figures``), the figure's question and caption said once (:func:`answer_markdown`), how many
    notices each method scored, and a link to the full finding."""

    from IPython.display import Markdown

    from construct_eval.studies.notebook_figures import figure_entry, notebook_link, stored_figure

    entry = figure_entry(figures, "construct_vs_baselines")
    findings = notebook_link(Path(figures).resolve().parent / "FINDINGS.md", Path(out_dir).resolve().parent)
    text = (
        answer_markdown(entry["what"], entry["answer"], entry["also"])
        + "\n\n"
        + counts_sentence(run)
        + " "
        + _say("finding_link", findings)
    )
    return [stored_figure(Path(figures) / "construct_vs_baselines.png", width=width), Markdown(text)]


def every_score_section(run: Path, link: Callable[..., str]) -> str:
    """Every score against the judge's rating on the notices it rated, per notice and per top-level
    field, each table under a line linking its stored paired table."""
    parts = [_say("every_score_intro")]
    for level, judge in (("document", "doc"), ("field", "field")):
        heading = _say("heading", level, link(f"paired_{level}_judge-{judge}", "stored table"))
        parts.append(f"{heading}\n\n{every_score_table(run, level)}")
    return "\n\n".join(parts)


def contact_section(run: Path, link: Callable[..., str]) -> str:
    """How each notice names its contact and how often the generator misses it, then what the
    contact rule and the generator's token log-probs find on every notice."""
    phrasing, rows = phrasing_table(run)
    missed = [r for r in rows if str(r["notice wrong"]).endswith("(100%)")]
    detection = {(r["level"], r["scorer"]): r for r in table(run, "detection")}
    rule, logprob = detection[("document", "contact_rule")], detection[("document", "token_logprob")]
    ways = " or ".join(str(r["how the notice names the contact"]) for r in missed)
    misses = sum(int(str(r["notice wrong"]).split()[0]) for r in missed)
    found = _say("contact", ways, misses, int(num(logprob["positives"])), int(num(rule["n"])), ci(rule),
                 ci(rule, "recall@20%"), ci(logprob), ci(logprob, "recall@20%"), link("detection", "stored table"))  # fmt: skip
    return f"{_say('contact_heading')}\n\n{phrasing}\n\n{found}"


def cost_section(run: Path, link: Callable[..., str]) -> str:
    """What each method costs, then on how many scores a calibration map predicts worse than the
    base rate (:func:`calibration_summary`)."""
    worse, of = calibration_summary(run)
    return f"{cost_table(run)}\n\n{_say('calibration', worse, of, link('calibration', 'stored table'))}"


def settings_table(runs: Path) -> str:
    """The paper's question in every setting begun (``construct_settings.csv``, written by
    :mod:`~construct_eval.studies.construct_settings_report`): per setting and level, how many
    outputs CONSTRUCT was asked on and how many it could score, CONSTRUCT's AUROC and the token
    log-probs' on the items both scored, their paired difference with its Holm p, and what the
    paired test allows (an underpowered row says so, whatever its interval); a setting not run yet
    says that."""
    rows = read_rows(Path(runs) / "construct_settings.csv")
    units = {"field": "top-level field", "filled field": "filled top-level field"}
    out = []
    for r in rows:
        head = {"dataset": r["dataset"], "generator": r["generator"], "judge": r["judge"]}
        document = "sentence" if "sentence" in r["dataset"] else "notice"  # what a document of the setting is
        if not r["level"]:
            out.append({**head, "per": "", "CONSTRUCT asked on (scored)": "", "items compared (wrong)": r["state"],
                        "CONSTRUCT AUROC": "", "token log-probs AUROC": "", "CONSTRUCT minus log-probs": "",
                        "p (Holm)": "", "ranking": "", "not ranked because": ""})  # fmt: skip
            continue
        asked = f"{int(r['asked']):,} of {int(r['planned']):,}"
        if r.get("scored"):
            asked += f" ({int(r['scored']):,})"
        ranking = "none: underpowered" if r["underpowered"] else r["ranking"]
        interval_of = ci(r, "construct_auroc")
        paired_only = r["level"] == "filled field"  # AUROCs on the items both scored, the difference's interval alone
        if not paired_only and num(r["construct_auroc_low"]) != num(r["construct_auroc_low"]):  # NaN: too few documents
            interval_of += f" (no interval: too few {document}s)"
        out.append({**head, "per": units.get(r["level"], document), "CONSTRUCT asked on (scored)": asked,
                    "items compared (wrong)": f"{int(r['n']):,} ({int(r['wrong']):,})",
                    "CONSTRUCT AUROC": interval_of, "token log-probs AUROC": ci(r, "logprob_auroc"),
                    "CONSTRUCT minus log-probs": ci(r, "construct_minus_logprob", "+"),
                    "p (Holm)": r.get("holm") or (f"{num(r['p_holm']):.3f}" if r["p_holm"] else ""), "ranking": ranking,
                    "not ranked because": r["underpowered"]})  # fmt: skip
    return markdown_table(out)


def stored_markdown(run: Path, name: str, link: Callable[..., str]) -> str:
    """A stored table of the run as its Markdown file prints it (the rows a reader sees, every
    number formatted where the table was written), its title bold above it and a link to it."""
    lines = (Path(run) / "metrics" / f"{name}.md").read_text().splitlines()
    title = next((x.removeprefix("## ") for x in lines if x.startswith("## ")), name)
    rows = [x for x in lines if x.startswith("|")]
    return f"**{title}** ({link(name, 'stored table')}: every column)\n\n" + "\n".join(rows)
