"""The CONSTRUCT figure's caption (``construct_vs_baselines``): the paper's question answered per
run and level from the rankings its paired tests allow after Holm, with what bounds the answer
(the items compared, Holm's family, constant ratings, a balanced order, the TLM preset, baselines
apart but not ranked, the recall panels), worded by ``templates/paper_comparison.md.j2``; and the
figure's title line (:func:`paper_title`)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from construct_eval.numbers import at_resample_floor, interval, p_bound, p_value
from construct_eval.paper import figure_data as fd
from construct_eval.paper.captions import Caption, macro, render
from construct_eval.paper.message_parts import num as _num
from construct_eval.paper.message_parts import run_model
from construct_eval.paper.message_parts import run_words as _dataset
from construct_eval.paper.message_parts import share_facts as _share_facts
from construct_eval.paper.message_parts import span as _span


def _scored(rows: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """The outputs CONSTRUCT scored in a run and those it was asked on (scored, and unscored: a
    reply TLM's code cannot read), from its document row's ``scored`` and ``unscored`` cells; (0, 0)
    if none."""
    ref = next((r for r in rows if r["level"] == "document" and r["key"] == "construct"), None)
    if ref is None:
        return 0, 0
    scored = int(fd._float(ref.get("scored")) or 0)
    return scored, scored + int(fd._float(ref.get("unscored")) or 0)


def paper_interim(rows: Sequence[Mapping[str, Any]]) -> str:
    """ "interim: CONSTRUCT asked on 18 of the 200 planned outputs (16 scored)" where CONSTRUCT was
    asked on fewer of a run's outputs than the study plans
    (:data:`~construct_eval.paper.figure_data.PAPER_PLANNED`), else "": an output whose replies
    cannot be read is unscored, with its reason, and the run is done when every planned output was
    asked."""
    counts = [_scored([r for r in rows if r["dataset"] == d]) for d in dict.fromkeys(r["dataset"] for r in rows)]
    short = [(scored, asked) for scored, asked in counts if asked < fd.PAPER_PLANNED]
    if not short:
        return ""
    asked, scored = _span([a for _, a in short], ",.0f"), _span([s for s, _ in short], ",.0f")
    return macro("_words", "interim", asked, fd.PAPER_PLANNED, scored)


def _unscored(rows: Sequence[Mapping[str, Any]]) -> str:
    """ "CONSTRUCT scored 182 of the 200 outputs it was asked on (18 whose replies TLM's code cannot
    read are unscored)", or "" where it scored every one."""
    scored, asked = _scored(rows)
    if asked == scored:
        return ""
    return macro("_words", "unscored", scored, asked)


def paper_title(rows: Sequence[Mapping[str, Any]]) -> str:
    """The line under the CONSTRUCT figure's dataset: the one model that generated and scored
    (:func:`run_model`) and what CONSTRUCT scored (:func:`paper_interim`): "Qwen2.5-Coder-1.5B
    generates and scores for every method; interim: CONSTRUCT asked on 23 of the 200 planned outputs
    (21 scored)".
    What every method scored is the panels' titles' count, not repeated here (a reader met three
    output counts in one title)."""
    runs = {r["dataset"] for r in rows}
    model = run_model(next(iter(runs))) if len(runs) == 1 else ""
    return macro("_words", "paper_title", model, paper_interim(rows))


def _constant(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[str]] | None:
    """Which of the judge's rows give every item one rating (``ratings``, their keys) and which
    rating (``given``, the table's ``one_value`` cells): those rows sit at chance by construction;
    None where none does."""
    said: dict[str, set[str]] = {}
    for r in rows:
        value = str(r.get("one_value") or "").strip()
        if value and r["key"].startswith("judge"):
            said.setdefault(r["key"], set()).add(value)
    if not said:
        return None
    return {"ratings": list(said), "given": sorted({v for vs in said.values() for v in vs}, key=fd._float)}


def _holm(p: float, tests: int, resamples: float) -> dict[str, Any]:
    """A Holm p as the findings write it (``_macros.md.j2``'s ``holm``: "p = 0.145 after Holm over
    30 tests"), or a bound ("p <= 0.014 ...") where it sits at the floor ``resamples`` allow
    (:func:`construct_eval.numbers.at_resample_floor`)."""
    said = p_bound(p) if at_resample_floor(p, tests, resamples) else p_value(p)
    return {"p": said, "tests": tests}


def _diff(r: Mapping[str, Any]) -> dict[str, Any]:
    """A baseline row's paired AUROC difference, CONSTRUCT minus it, with its interval and its Holm p
    (None where the row has none)."""
    diff, low, high = (fd._float(r.get(f"auroc_diff{end}")) for end in ("", "_low", "_high"))
    p = fd._float(r.get("auroc_p_holm"))
    return {
        "diff": interval(diff, low, high, spec="+.3f", bounds="+.3f"),
        "holm": None if math.isnan(p) else _holm(p, int(r.get("holm_tests") or 0), fd._float(r.get("n_boot"))),
    }


def _auroc_of(r: Mapping[str, Any]) -> str:
    return interval(fd._float(r["auroc"]), fd._float(r["auroc_low"]), fd._float(r["auroc_high"]))


def paper_comparison(rows: Sequence[Mapping[str, Any]]) -> Caption:
    """The message of the CONSTRUCT figure, worded by ``templates/paper_comparison.md.j2`` from
    :func:`paper_comparison_facts`; "" where no run has a CONSTRUCT row to compare."""
    facts = paper_comparison_facts(rows)
    return render("paper_comparison", facts) if facts["runs"] else Caption("")


def paper_comparison_facts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the CONSTRUCT figure's caption says, per run (``runs``): the paper's question answered
    per level (``answers``) from the rankings the paired tests allow after Holm (CONSTRUCT against
    each baseline, on the items every method scored): "no" where CONSTRUCT ranks below a baseline,
    with the paired difference and its Holm p; "yes" where it ranks above one and below none; "not
    yet" where every comparison is underpowered; else no difference detected; each with
    CONSTRUCT's AUROC and its items, a ranked level first; interim where CONSTRUCT has scored fewer
    outputs than planned (:func:`paper_interim`). Then: which tests Holm's family holds
    (:func:`_primary_family`), the judge's constant ratings (:func:`_constant`: at chance by
    construction), a balanced order's share wrong, the TLM preset, the rules that block ranking a
    baseline whose interval lies apart (``not_ranked``, :func:`_not_ranked`), a baseline that
    varies and is not ranked (``unranked``), CONSTRUCT with the generator's samples where it ranks
    the items exactly as CONSTRUCT does (``gen``), and the recall panels (:func:`_paper_recall`)."""
    runs = []
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    for run in datasets:
        mine = [r for r in rows if r["dataset"] == run]
        answers: list[tuple[int, dict[str, Any]]] = []
        not_ranked: list[dict[str, Any]] = []
        unranked: dict[tuple[str, str], list[dict[str, Any]]] = {}  # a varying baseline not ranked, said once
        for level, unit in (("document", "output"), ("field", "field")):
            ref = next((r for r in mine if r["level"] == level and r["key"] == "construct"), None)
            if ref is None or math.isnan(ref["auroc"]):
                continue
            own = {"auroc": _auroc_of(ref), "chance": ref["auroc_low"] <= 0.5 <= ref["auroc_high"],
                   "n": _num(ref["n"], ",.0f"), "wrong": _num(ref["wrong"], ",.0f")}  # fmt: skip
            tested = [r for r in mine if r["level"] == level and r["key"] not in ("construct", "construct-gen")
                      and str(r.get("auroc_ranking") or "")]  # fmt: skip
            above = [r for r in tested if str(r["auroc_ranking"]).endswith("higher")]
            below = [r for r in tested if str(r["auroc_ranking"]).endswith("lower")]
            said = {"unit": unit, "own": own, "versus": []}
            if below or above:
                said |= {"kind": "below" if below else "above",
                         "versus": [{"label": _paper_label(r["key"])} | _diff(r) for r in below or above]}  # fmt: skip
                answers.append((0, said))
            elif tested and all(str(r["auroc_ranking"]).startswith("none: underpowered") for r in tested):
                answers.append((1, said | {"kind": "not yet"}))
                apart = [r for r in tested if r["auroc_low"] > ref["auroc_high"] or r["auroc_high"] < ref["auroc_low"]
                         or fd._float(r.get("auroc_diff_low")) > 0 or fd._float(r.get("auroc_diff_high")) < 0]  # fmt: skip
                not_ranked += [{"unit": unit} | _not_ranked(_paper_label(r["key"]), r, ref) for r in apart]
            else:
                answers.append((1, said | {"kind": "no difference"}))
            if above or below:  # a baseline that varies and is not ranked: no difference detected
                for r in tested:
                    if r not in above + below and not r.get("one_value") and str(r["auroc_ranking"]).startswith("none"):
                        flat = fd.paper_flat_note(r)  # a rating of 2 values barely orders: said where it is compared
                        unranked.setdefault((_paper_label(r["key"]), flat), []).append(
                            {"unit": unit, "auroc": _auroc_of(r)} | _diff(r)
                        )
        if not answers:
            continue
        interim = paper_interim(mine)
        doc = next((r for r in mine if r["level"] == "document" and r["key"] == "construct"), None)
        balanced = None
        if doc is not None and doc.get("run_n") and not math.isnan(doc["n"]):  # the outputs compared are not the run
            n, wrong, all_n, all_wrong = (int(doc[k]) for k in ("n", "wrong", "run_n", "run_wrong"))
            if abs(wrong / n - all_wrong / all_n) > 0.05:  # a share that moves a recall at a budget
                balanced = {"n": _num(n, ",.0f"), "share": _share_facts(wrong, n, all_wrong, all_n)}
        gen = (
            next((r for r in mine if r["key"] == "construct-gen"), None)
            if fd.same_ranking(mine, "construct-gen")
            else None
        )
        preset = (doc or {}).get("preset", "")
        runs.append({
            "dataset": _dataset(run),
            "answers": [a for _, a in sorted(answers, key=lambda a: a[0])],  # the answer leads, plainly
            "model": run_model(run),  # the scope, in the sentence quoted
            "interim": interim.removeprefix("interim: "),
            "unscored": "" if interim else _unscored(mine),
            "family": _primary_family(mine),
            "constant": _constant(mine),
            "balanced": balanced,
            "preset": {"name": preset, "calls": doc.get("calls_per_output", "")} if preset and doc else None,
            "not_ranked": not_ranked,
            "unranked": [{"label": label, "flat": flat, "levels": levels} for (label, flat), levels in unranked.items()],
            "gen": interval(fd._float(gen["auroc_diff"]), fd._float(gen["auroc_diff_low"]), fd._float(gen["auroc_diff_high"]),
                            spec="+.3f", bounds="+.3f") if gen else "",
            "recall": _paper_recall(mine),
        })  # fmt: skip
    return {"runs": runs, "several": len(datasets) > 1}


def _primary_family(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Which tests "Holm over N tests" counts in the CONSTRUCT figure: the paper's claim as one
    pre-specified family (CONSTRUCT's AUROC against each primary baseline, at each level), named
    from the table's ``auroc_holm_family``; every other paired test is corrected in a second family."""
    parts = []
    for level, unit in (("document", "output"), ("field", "field")):
        keys = [r["key"] for r in rows if r["level"] == level and r.get("auroc_holm_family") == "primary"
                and str(r.get("auroc_p_holm") or "").strip() not in ("", "nan")]  # fmt: skip
        if keys:
            parts.append({"unit": unit, "against": [_paper_label(k) for k in keys]})
    tests = next((r["holm_tests"] for r in rows if r.get("auroc_holm_family") == "primary"), 0)
    return {"tests": tests, "parts": parts} if parts else None


def _paper_recall(rows: Sequence[Mapping[str, Any]], budget: int = 20) -> dict[str, Any] | None:
    """The CONSTRUCT figure's lower panels: the share of wrong items found when the lowest-scored
    ``budget`` % are reviewed, against the ceiling a perfect score reaches on items this often wrong
    (the judged notices are a balanced sample, not the run's prevalence), and the recall rankings
    the paired tests allow after Holm (CONSTRUCT against each baseline, ``rankings`` per level)."""
    parts, rankings = [], []
    for level, unit in (("document", "outputs"), ("field", "fields")):
        ref = next((r for r in rows if r["level"] == level and r["key"] == "construct"), None)
        if ref is None or math.isnan(fd._float(ref.get(f"recall@{budget}%"))):
            continue
        wrong, n = fd._float(ref["wrong"]), fd._float(ref["n"])
        perfect = min(1.0, budget / 100 * n / wrong) if wrong else math.nan
        parts.append({"found": _num(100 * fd._float(ref[f"recall@{budget}%"]), ".0f"), "wrong": _num(wrong, ",.0f"),
                      "unit": unit, "n": _num(n, ",.0f"), "perfect": _num(100 * perfect, ".0f")})  # fmt: skip
        ranked = [r for r in rows if r["level"] == level
                  and str(r.get(f"recall@{budget}%_ranking") or "").endswith(("higher", "lower"))]  # fmt: skip
        rankings.append({"unit": unit[:-1], "ranked": [
            {"above": str(r[f"recall@{budget}%_ranking"]).endswith("higher"), "label": _paper_label(r["key"])}
            for r in ranked]})  # fmt: skip
    if not parts:
        return None
    said = {tuple((r["above"], r["label"]) for r in k["ranked"]) for k in rankings}
    return {
        "budget": budget,
        "parts": parts,
        "rankings": [k for k in rankings if k["ranked"]],
        "none": said == {()},
        "both": len(said) == 1 and len(rankings) == 2,  # the same ranking at both levels: said once
    }


def _not_ranked(method: str, r: Mapping[str, Any], ref: Mapping[str, Any]) -> dict[str, Any]:
    """Why the paper comparison's table does not rank a baseline whose AUROC interval lies apart from
    CONSTRUCT's, or whose paired difference excludes 0: the paired difference (CONSTRUCT minus it)
    with its interval and Holm p, and each rule that blocks the ranking (``underpowered``: the power
    rule, through whichever row is underpowered, or the interval-width rule where that is the one;
    ``holm_blocks``: Holm)."""
    diff, low, high = (fd._float(r.get(f"auroc_diff{end}")) for end in ("", "_low", "_high"))
    p = fd._float(r.get("auroc_p_holm"))
    # the pair is underpowered through whichever row is: the baseline's, else CONSTRUCT's
    own = str(r.get("underpowered") or "")
    reason = own or str(ref.get("underpowered") or "")
    return {
        "method": method,
        "auroc": _auroc_of(r),
        "apart": r["auroc_low"] > ref["auroc_high"] or r["auroc_high"] < ref["auroc_low"],
        "diff": "" if math.isnan(diff) else interval(diff, low, high, spec="+.3f", bounds="+.3f"),
        "excluding": low > 0 or high < 0,
        "holm": None if math.isnan(p) else _holm(p, int(r.get("holm_tests") or 0), fd._float(r.get("n_boot"))),
        "underpowered": {
            "own": bool(own),
            "wide": "wide" in reason,
            "reason": re.sub(r" [(]> ([0-9.]+)[)]$", r", > \1", reason),  # "0.32 wide (> 0.3)" inside parentheses
        }
        if reason
        else None,
        "holm_blocks": not math.isnan(p) and p >= 0.05,
    }


def _paper_label(key: str) -> str:
    from construct_eval.paper.comparison_plot import PAPER_LABELS

    return PAPER_LABELS.get(key, key).split("\n")[0]
