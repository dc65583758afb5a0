"""Each main figure's message: the facts its caption words, computed from the numbers the figure draws.

A main figure answers one question (:mod:`~construct_eval.paper.figures`); its message is that
answer, written as its caption in ``figures.md`` and the manifest. Each message function here
computes its figure's facts (``<figure>_facts``: numbers formatted through :func:`_num` and
:func:`~construct_eval.numbers.interval`, booleans for which comparisons are apart, the n's) and
renders them through ``templates/<figure>.md.j2`` (:mod:`~construct_eval.paper.captions`) into a
:class:`~construct_eval.paper.captions.Caption`: the answer, a sentence for each further thing
the figure draws, and the answer's first clause. The words are chosen by the numbers, never
typed in: a comparison is said to favour one score only where the two 95% intervals are apart (a
conservative reading of a difference; the paired tests are in the run's tables, and a message
that quotes one reads it from there), and every number quoted is one the figure draws, rounded
as the tables round it (AUROC and rating points to three decimals, error rates and shares found
to a tenth of a percent or a whole percent). A wording change touches a template only.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from construct_eval.display.style import display_name, order_label
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.numbers import interval
from construct_eval.paper import figure_data as fd
from construct_eval.paper.captions import Caption, macro, render
from construct_eval.paper.message_parts import num as _num
from construct_eval.paper.message_parts import run_words as _dataset
from construct_eval.paper.message_parts import share_facts as _share_facts
from construct_eval.paper.message_parts import span as _span

JUDGE_ROLES = frozenset({"judge", "judge-free", "expected", "expected-free", "p-correct", "lowest", "lowest-expected"})
"""The judge's own scores (its written rating, expected rating, P(correct), their field minima)."""


def _plain(label: str) -> str:
    """A score's label in a sentence: without the figure's "(no labels)" reminder; the token
    log-probs named as the generator's."""
    label = re.sub(r" \((no labels|uses the labels|uses labels|built for the planted kinds)\)", "", label)
    return "generator's token log-probs" if label == "token log-probs" else label


def _count_sets(k: int) -> str:
    """ "the one dataset" or "the 3 datasets": how many datasets a sentence speaks of."""
    return macro("_words", "count_sets", k)


def planted_scope(datasets: Sequence[str]) -> str:
    """What a caption rests on where some of its datasets' errors were planted by the package, as
    its first clause opens: "On errors the package planted (the 3 datasets drawn; no generator wrote
    their outputs)" where all were, "On 3 datasets with errors the package planted and 2 with a
    generator's errors" where some were (``templates/_words.md.j2``); "" where a generator made every
    dataset's errors."""
    datasets = list(dict.fromkeys(datasets))
    planted = [d for d in datasets if not fd.generators_errors(d)]
    return macro("_words", "planted_scope", len(planted), len(datasets)) if planted else ""


def _small(n: int) -> str:
    """A count under ten in words ("one", "six"): beside a rating's values ("a 1 is 31.4% wrong") a
    count written "1" reads as a rating."""
    words = ("none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
    return words[n] if 0 <= n < len(words) else f"{n:,}"


def _best(rows: Sequence[Any], value: Any) -> Any:
    return max(rows, key=value) if rows else None


def _planted_checks(e: Any, dataset: str) -> bool:
    """The plausibility checks on planted errors: written knowing the planted kinds, a ceiling
    there, not a fair label-free score."""
    return fd.role(e if isinstance(e, str) else e.scorer) == "plausibility" and dataset_label(dataset)[1].startswith(
        "planted"
    )


def judge_leads(estimates: Sequence[fd.Estimate]) -> list[fd.Estimate]:
    """The judge's best label-free row on each panel where its interval lies above every other
    label-free score's (:func:`detection` says where it leads, and why)."""
    out = []
    for p in dict.fromkeys(e.panel for e in estimates):
        mine = [e for e in estimates if e.panel == p and not e.uses_labels]
        judge = _best([e for e in mine if fd.role(e.scorer) in JUDGE_ROLES], lambda e: e.value)
        other = _best([e for e in mine if fd.role(e.scorer) not in JUDGE_ROLES], lambda e: e.value)
        if judge is not None and other is not None and judge.low > other.high:
            out.append(judge)
    return out


def contest(estimates: Sequence[fd.Estimate], panel: str) -> tuple[fd.Estimate | None, fd.Estimate | None]:
    """On one panel, the judge's best label-free score and the best label-free score other than
    the judge's (the plausibility checks on planted errors not counted: written knowing the
    planted kinds, a ceiling there): the two a detection message compares."""
    mine = [e for e in estimates if e.panel == panel and not e.uses_labels]
    judge = _best([e for e in mine if fd.role(e.scorer) in JUDGE_ROLES], lambda e: e.value)
    fair = [e for e in mine if fd.role(e.scorer) not in JUDGE_ROLES and not _planted_checks(e, e.dataset)]
    return judge, _best(fair, lambda e: e.value)


def unpaired(estimates: Sequence[fd.Estimate]) -> list[tuple[fd.Estimate, fd.Estimate]]:
    """The (other, judge) pairs :func:`detection` compares whose scores rated different items (a
    judge asked on part of the outputs): their comparison needs the items both rated
    (:func:`~construct_eval.reports.figure_pairs.paired_on_common`), not two intervals."""
    out = []
    for p in dict.fromkeys(e.panel for e in estimates):
        judge, other = contest(estimates, p)
        if judge is not None and other is not None and (judge.n, judge.positives) != (other.n, other.positives):
            out.append((other, judge))
    return out


Paired = Mapping[tuple[str, str, str], Mapping[str, Any]]
"""(panel, score, judge's score) -> their comparison on the items both rated
(:func:`~construct_eval.reports.figure_pairs.paired_on_common`)."""


def _order(other: fd.Estimate, judge: fd.Estimate, paired: Paired) -> tuple[int, Mapping[str, Any] | None]:
    """Which of the two finds more: 1 the other score, -1 the judge's, 0 neither shown; on the
    same items by their intervals (apart), on different items by the paired difference on the
    items both rated (its interval excludes 0), which is then returned beside."""
    pair = paired.get((other.panel, other.scorer, judge.scorer))
    if (judge.n, judge.positives) != (other.n, other.positives) and pair is not None:
        return (1 if pair["low"] > 0 else -1 if pair["high"] < 0 else 0), pair
    return (1 if other.low > judge.high else -1 if judge.low > other.high else 0), None


def _within(rows: Sequence[Mapping[str, Any]] | None, label: str, place: str, prior: fd.Estimate | None = None
            ) -> dict[str, Any]:  # fmt: skip
    """Where the judge leads the label-free scores on ``place``, what it knows within a field
    (:func:`~construct_eval.paper.figure_data.within_field_rows`; ``rows`` None where not asked): on
    how many of the fields that can test it (``powered``) its ``label`` is above chance within the
    field (``above``); where that is under half of them (``few``), its lead may come from which
    field is rated, said beside what the field prior (``prior``, a score that uses the labels and
    knows only the field) reaches there."""
    said: dict[str, Any] = {"place": place, "asked": rows is not None, "label": label, "min_class": fd.MIN_CLASS}
    powered = [r for r in rows or [] if r["powered"]]
    above = [r for r in powered if r["auroc_low"] > 0.5]
    few = 2 * len(above) < len(powered)
    return said | {"powered": len(powered), "above": len(above), "few": few,
                   "prior": _num(prior.value) if few and prior is not None else None}  # fmt: skip


def _pair(pair: Mapping[str, Any], unit: str) -> dict[str, Any]:
    """A comparison on the items two scores both rated, as ``detection.md.j2`` words it: the items
    (``n``), their share wrong beside the drawn score's where the two differ (``share``: a judge
    asked on a chosen part of the outputs sees another share wrong than the run), the two AUROCs
    (``a`` the better, with its value as drawn on all its items beside, ``drawn``, where those are
    more) and their paired difference with its interval."""
    differs = pair.get("drawn_n") not in (None, pair["n"])
    return {
        "name": dataset_label(pair["dataset"])[0] if "dataset" in pair else "",
        "n": _num(pair["n"], ",.0f"),
        "unit": unit,
        "share": _share_facts(pair["positives"], pair["n"], pair["drawn_positives"], pair["drawn_n"])
        if differs and pair.get("drawn_positives") is not None
        else None,
        "a": _num(pair["auroc_a"]),
        "drawn": {"value": _num(pair["drawn"]), "n": _num(pair["drawn_n"], ",.0f")} if differs else None,
        "b": _num(pair["auroc_b"]),
        "difference": interval(pair["difference"], pair["low"], pair["high"], spec="+.3f", bounds="+.3f"),
    }


def detection(
    estimates: Sequence[fd.Estimate],
    items: str,
    within: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]] | None = None,
    paired: Paired | None = None,
) -> Caption:
    """The message of a main detection figure, worded by ``templates/detection.md.j2`` from
    :func:`detection_facts`."""
    return render("detection", detection_facts(estimates, items, within, paired))


def detection_facts(
    estimates: Sequence[fd.Estimate],
    items: str,
    within: Mapping[tuple[str, str], Sequence[Mapping[str, Any]]] | None = None,
    paired: Paired | None = None,
) -> dict[str, Any]:
    """What a main detection figure's caption says. The answer: of the datasets where a
    label-free score other than the judge's could run (the plausibility checks on planted errors
    not counted, :func:`contest`), on how many (``k`` of ``m``) one finds ``items`` better than the
    judge's best score and which score that is (``better``), and the range of the judge's best
    (``judge``: "from chance" where its interval holds 0.5). Better: the two 95% intervals apart,
    or, where the two rated different items, the paired difference on the items both rated
    (``paired``, :func:`unpaired`) excluding 0 (``basis``, ``common``: those comparisons with their
    numbers; ``apart``: the datasets won by intervals apart, named where the two bases mix). Then what else the figure draws: the plausibility checks on planted errors (a
    ceiling there; on errors the package planted alone they are the answer, ``planted``), a fair
    score below chance (``below``), where the judge leads the label-free scores (``leads``;
    ``within``: (dataset, scorer) -> its per-field rows within filled fields, whether it does
    within a field), and a score that uses the labels (drawn grey) below chance on a panel: a
    reference, not a ceiling (``grey``, :func:`_below_chance`)."""
    panels = list(dict.fromkeys(e.panel for e in estimates))
    label = {e.scorer: _plain(display_name(e.scorer)) for e in estimates}
    unit = "outputs" if items.endswith("outputs") else "fields"
    better: Counter[str] = Counter()
    ceiling, planted_panels = 0, 0
    leads: list[dict[str, Any]] = []
    judge_best: list[fd.Estimate] = []
    fair_panels: list[str] = []
    fair_scores: list[fd.Estimate] = []
    common: list[Mapping[str, Any]] = []
    apart: list[str] = []  # the datasets where the better score's interval is apart from the judge's
    for p in panels:
        judge, other = contest(estimates, p)
        if judge is None:
            continue
        judge_best.append(judge)
        mine = [e for e in estimates if e.panel == p and not e.uses_labels]
        fair = [e for e in mine if fd.role(e.scorer) not in JUDGE_ROLES and not _planted_checks(e, e.dataset)]
        if fair:
            fair_panels.append(judge.dataset)
            fair_scores += fair
        checks = [e for e in mine if _planted_checks(e, e.dataset)]
        if checks:
            planted_panels += 1
            ceiling += any(c.low > judge.high for c in checks)
        if other is None:
            continue
        side, pair = _order(other, judge, paired or {})
        if side > 0:
            better[label[other.scorer]] += 1
            common += (
                [{**pair, "drawn": other.value, "drawn_n": other.n, "drawn_positives": other.positives}]
                if pair is not None
                else []
            )
            apart += [] if pair is not None else [dataset_label(other.dataset)[0]]
        elif side < 0:
            rows = (within or {}).get((judge.dataset, judge.scorer))
            prior = _best([e for e in estimates if e.panel == p and e.uses_labels and fd.role(e.scorer) == "prior"],
                          lambda e: e.value)  # fmt: skip
            lead = _within(rows, label[judge.scorer], _dataset(judge.dataset), prior)
            leads.append(lead | {"pair": _pair(pair, unit) if pair else None, "name": dataset_label(judge.dataset)[0]})
    facts: dict[str, Any] = {"items": items, "unit": unit, "no_judge": not judge_best}
    if not judge_best:
        return facts
    k, n, m = sum(better.values()), len(judge_best), len(fair_panels)
    sources = {dataset_label(d)[1].split(",")[0] for d in fair_panels}
    name = next(iter(better)) if len(better) == 1 else ""
    low = min(judge_best, key=lambda e: e.value)
    high = max(judge_best, key=lambda e: e.value)
    planted_only = bool(planted_scope(panels)) and not any(fd.generators_errors(e.dataset) for e in judge_best)
    facts |= {
        "k": k,
        "n": n,
        "m": m,
        "where": "with a generator's errors"
        if sources and all(s.startswith("generator") for s in sources)
        else "where a label-free score other than the judge's ran",
        "place": dataset_label(fair_panels[0])[0] if m == 1 else "",
        "better": {
            "name": name,
            "plural": name.endswith("s"),
            "counted": [{"name": b, "k": c} for b, c in better.most_common()],
        },
        "basis": "intervals" if not common else "paired" if len(common) == k == 1 else "either",
        "common": [_pair(c, unit) for c in common],
        "apart": apart,
        "planted": {
            "scope": planted_scope([e.dataset for e in judge_best]),
            "checked": planted_panels,
            "ceiling": ceiling,
            "sets": _count_sets(n).removeprefix("the "),
        }
        if planted_only
        else None,
        "checks": {"panels": 0 if planted_only else planted_panels, "ceiling": ceiling},
        "judge": {
            "one": n == 1,
            "low": _num(low.value),
            "chance": low.low <= 0.5 <= low.high,
            "low_on": _dataset(low.dataset),
            "high": _num(high.value),
            "high_on": _dataset(high.dataset),
            "panels": "both" if n == 2 else f"all {n}",
            "span": _span([e.value for e in judge_best]),
        },
        "below": [
            {"label": label[e.scorer], "on": dataset_label(e.dataset)[0], "auroc": interval(e.value, e.low, e.high)}
            for e in fair_scores
            if e.high < 0.5
        ],
        "leads": leads,
        "grey": _below_chance([e for e in estimates if e.uses_labels], len(panels)),
    }
    return facts


def _below_chance(grey: Sequence[fd.Estimate], panels: int) -> list[dict[str, Any]]:
    """Each score drawn grey (it uses the labels) whose AUROC interval lies under 0.5 on some of
    the ``panels``: there it is a reference, not a ceiling; ``field_prior`` where it is the field
    prior, whose leave-one-out rate within a field ranks the items backwards by construction."""
    said = []
    for scorer in dict.fromkeys(e.scorer for e in grey):
        below = [e.value for e in grey if e.scorer == scorer and e.high < 0.5]
        if below:
            said.append({"label": _plain(display_name(scorer)), "k": len(below), "panels": panels,
                         "span": _span(below), "field_prior": scorer.startswith("field-prior")})  # fmt: skip
    return said


def _review_candidates(rows: Sequence[Mapping[str, Any]], budget: int) -> tuple[int | None, list[Mapping[str, Any]]]:
    """The budget drawn nearest ``budget`` % (the larger on a tie) and the label-free rows there
    that can be a best score: a constant rating orders nothing (its recall is only how its ties
    were broken)."""
    budgets = sorted({int(r["budget"]) for r in rows})
    if not budgets:
        return None, []
    b = min(budgets, key=lambda x: (abs(x - budget), -x))
    return b, [r for r in rows if int(r["budget"]) == b and not r["uses_labels"] and r.get("flat_note") != "constant"]


def _judge_best(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    return _best([r for r in rows if fd.role(r["scorer"]) in JUDGE_ROLES], lambda r: r["recall"])


def judge_best_review(rows: Sequence[Mapping[str, Any]], budget: int = 20) -> dict[str, Mapping[str, Any]]:
    """The judge's best score on each dataset of a review figure, as :func:`review` chooses it: the
    judge's row (its rating, expected rating, P(correct), their field minima) that finds the most
    wrong items at the budget drawn nearest ``budget`` %, by dataset. The figure rings it, so the
    caption's "the judge's best" is a curve a reader can find (the detection figures choose by
    AUROC; this one by what a review finds)."""
    b, at = _review_candidates(rows, budget)
    best = {d: _judge_best([r for r in at if r["dataset"] == d]) for d in dict.fromkeys(r["dataset"] for r in at)}
    return {d: r for d, r in best.items() if r is not None and b is not None}


def review(rows: Sequence[Mapping[str, Any]], unit: str, budget: int = 20) -> Caption:
    """The message of a main review figure, worded by ``templates/review.md.j2`` from
    :func:`review_facts`; "" where no budget is drawn."""
    facts = review_facts(rows, unit, budget)
    return render("review", facts) if facts is not None else Caption("")


def review_facts(rows: Sequence[Mapping[str, Any]], unit: str, budget: int = 20) -> dict[str, Any] | None:
    """What a main review figure's caption says: the share of the wrong ``unit`` found when
    reviewing ``budget`` % (or the nearest budget drawn), lowest score first, by the judge's best
    (``judge``: no more than a random review where its interval holds the budget,
    :func:`_at_random`; the answer) and by the best label-free score that is not the judge's
    (``other``; the plausibility checks on planted errors not counted: written for the planted
    kinds), against a random review's share; on how many datasets their intervals are apart
    (``compared``), compared only where both rated the same items (``apart``: where they did not;
    a recall at a budget depends on the share wrong); a panel recomputed on the items all its
    scores rated (``common``). A rating constant on a dataset's items is not a candidate (the
    figure does not draw it). None where no budget is drawn."""
    b, at = _review_candidates(rows, budget)
    if b is None:
        return None
    judge, other, names = [], [], Counter()
    other_sets: list[str] = []
    ahead = behind = compared = 0
    apart: list[dict[str, str]] = []
    candidates: dict[str, int] = {}  # a dataset's label-free scores other than the judge's
    for d in dict.fromkeys(r["dataset"] for r in at):
        mine = [r for r in at if r["dataset"] == d]
        j = _judge_best(mine)
        fair = [r for r in mine if fd.role(r["scorer"]) not in JUDGE_ROLES and not _planted_checks(r["scorer"], d)]
        candidates[d] = len(fair)
        o = _best(fair, lambda r: r["recall"])
        if j is not None:
            judge.append(j)
        if o is not None:
            other.append(o)
            other_sets.append(d)
            names[_plain(display_name(o["scorer"]))] += 1
        if j is None or o is None:
            continue
        if (j["n"], j["positives"]) != (o["n"], o["positives"]):
            apart.append({
                "dataset": _dataset(d), "judge_n": _num(j["n"], ",.0f"), "judge_wrong": _num(j["positives"], ",.0f"),
                "other": _plain(display_name(o["scorer"])), "other_n": _num(o["n"], ",.0f"),
                "other_wrong": _num(o["positives"], ",.0f"),
            })  # fmt: skip
            continue
        compared += 1
        ahead += o["recall_low"] > j["recall_high"]
        behind += j["recall_low"] > o["recall_high"]
    facts: dict[str, Any] = {
        "scope": planted_scope([r["dataset"] for r in rows]),  # where the errors were planted, said first
        "budget": b,
        "unit": unit,
        "judge": _at_random(judge, b) if judge else None,  # the judge's answer leads: the paper's question
        "other": None,
        "compared": None,
        "apart": apart,
        "common": [],
    }
    if len(other) == 1:  # one dataset: the score named, "the only" where no other one ran there
        o, name = other[0], next(iter(names))
        facts["other"] = {
            "one": True,
            "name": name,
            "plural": name.endswith("s"),
            "dataset": _dataset(other_sets[0]),
            "recall": _num(100 * o["recall"], ".0f"),
            "on_all": _on_all(o),
            "which": "the only" if candidates[other_sets[0]] == 1 else "the best",
        }
    elif other:
        facts["other"] = {
            "one": False,
            "span": _span([100 * o["recall"] for o in other], ".0f"),
            "counted": [{"name": name, "k": k} for name, k in names.most_common()],
        }
    if compared:
        first = _plain(names.most_common(1)[0][0]) if len(names) == 1 else "best other score"
        facts["compared"] = {"n": compared, "first": first, "plural": first.endswith("s"), "ahead": ahead,
                             "behind": behind}  # fmt: skip
    for d in dict.fromkeys(r["dataset"] for r in rows):
        common = next((r for r in rows if r["dataset"] == d and r.get("common_of")), None)
        if common is not None:
            whole = next((r for r in rows if r["dataset"] == d and r.get("all_n") == common["common_of"]), None)
            facts["common"].append({
                "dataset": _dataset(d), "n": _num(common["n"], ",.0f"), "of": _num(common["common_of"], ",.0f"),
                "share": _share_facts(common["positives"], common["n"], whole["all_positives"], whole["all_n"])
                if whole else None,
                "wrong": _num(common["positives"], ",.0f"),
            })  # fmt: skip
    return facts


def _on_all(row: Mapping[str, Any]) -> dict[str, str] | None:
    """Where a review row was recomputed on a panel's common items, its recall on all its own
    items beside (the caption's " on the 246 outputs every score drawn rated (39% [33%, 46%] on
    all 350)"), else None."""
    if not row.get("common_of") or row.get("all_n") in (None, row["n"]):
        return None
    return {"n": _num(row["n"], ",.0f"), "recall": _num(100 * row["all_recall"], ".0f"),
            "low": _num(100 * row["all_recall_low"], ".0f"), "high": _num(100 * row["all_recall_high"], ".0f"),
            "all_n": _num(row["all_n"], ",.0f")}  # fmt: skip


def _at_random(rows: Sequence[Mapping[str, Any]], budget: int) -> dict[str, Any]:
    """What a score's best rows find at ``budget`` % reviewed: on the datasets where the recall's
    interval holds the random ``budget`` % (``chance``, with how far the intervals reach; ``one``
    where that is the one dataset drawn, named) it "cannot be told from a random review", on the
    others (``rest``) it finds the recall itself, named per dataset where there are two or fewer."""
    chance = [r for r in rows if r["recall_low"] <= budget / 100 <= r["recall_high"]]
    rest = [r for r in rows if r not in chance]
    if len(rows) == 1 and chance:  # one dataset: named, with its interval's upper end
        r = chance[0]
        return {"one": {"dataset": _dataset(r["dataset"]), "upper": _num(100 * r["recall_high"], ".0f")}}
    return {
        "one": None,
        "chance": {"k": len(chance), "of": len(rows), "upper": _span([100 * r["recall_high"] for r in chance], ".0f")}
        if chance
        else None,
        "rest": {
            "named": [{"recall": _num(100 * r["recall"], ".0f"), "dataset": _dataset(r["dataset"])} for r in rest]
            if len(rest) <= 2
            else None,
            "span": _span([100 * r["recall"] for r in rest], ".0f"),
            "k": len(rest),
        }
        if rest
        else None,
    }


def _pct(values: Sequence[float]) -> str:
    """A span of shares in whole percent ("1-10%"), whose top says 100% only of all (">99%", as
    the figures write a share short of all)."""
    lo, hi = min(values), max(values)
    if f"{100 * hi:.0f}" == "100" and hi < 1:
        return f"{100 * lo:.0f}% to >99%"
    return _span([100 * v for v in values], ".0f") + "%"


def _few_items(drawn: Sequence[fd.MeaningPanel], min_items: int) -> dict[str, Any] | None:
    """Why no (other) inversion is detectable: how many of the values drawn (a value with items in
    its panel) hold under ``min_items`` items (``most`` only where more than half do), and the
    ratings where most of the values do (``sparse``, said only where not most values overall do);
    None where no value is drawn."""
    counts = [[fd._float(r["n"]) for r in p.table.rows if fd._float(r["n"]) > 0] for p in drawn]
    total, few = sum(len(c) for c in counts), sum(n < min_items for c in counts for n in c)
    if not total:
        return None
    facts: dict[str, Any] = {
        "few": few,
        "total": total,
        "min_items": min_items,
        "most": 2 * few > total,
        "sparse": None,
    }
    sparse = [(p, c) for p, c in zip(drawn, counts, strict=True) if 2 * sum(n < min_items for n in c) > len(c)]
    if sparse and 2 * few <= total:
        levels = {p.table.level for p, _ in sparse}
        facts["sparse"] = {
            "ratings": len(sparse),
            "which": {"document": "all per output", "field": "all per field"}.get(levels.pop(), "")
            if len(levels) == 1
            else "",
            "held": sum(sum(n < min_items for n in c) for _, c in sparse),
            "of": sum(len(c) for _, c in sparse),
        }
    return facts


def meaning(panels: Sequence[fd.MeaningPanel], min_items: int = 20) -> Caption:
    """The message of the meaning figure, worded by ``templates/meaning.md.j2`` from :func:`meaning_facts`."""
    return render("meaning", meaning_facts(panels, min_items))


def meaning_facts(panels: Sequence[fd.MeaningPanel], min_items: int = 20) -> dict[str, Any]:
    """What the meaning figure's caption says: in how many of the ratings drawn as panels (a field
    rating within the fields the output filled) a lower rating is wrong less often than a higher one
    (Wilson intervals apart, values with at least ``min_items`` items), the widest such pair as an
    example; how many of the values drawn hold too few items for any other inversion to be
    detected (:func:`_few_items`); how often the fields left empty are wrong and which value they
    get; and how many ratings give one value to nearly every output (a line, not a panel)."""
    drawn = [p for p in panels if p.one_value is None]
    flat = [p for p in panels if p.one_value is not None]
    found = [(hit, p.table) for p in drawn if (hit := fd.out_of_order(p.table, min_items))]
    levels = {p.table.level for p in drawn}
    kinds = {"document": "per output", "field": "per field, within the fields an output filled"}
    facts: dict[str, Any] = {
        "planted": planted_scope([p.table.dataset for p in panels]),  # what the answer rests on, said first
        "drawn": _small(len(drawn)),
        "found": _small(len(found)),
        "one": len(found) == 1,
        "scope": " or ".join(kinds[level] for level in ("document", "field") if level in levels),
        "example": None,
        "few": _few_items(drawn, min_items),
        "empty": None,
        "flat": None,
    }
    if found:
        (_, lo, hi), t = max(found, key=lambda f: f[0][0])
        facts["example"] = {
            "unit": "output" if t.level == "document" else "filled field",
            "dataset": _dataset(t.dataset),
            "scorer": display_name(t.scorer),
            "low": {"value": _num(lo["value"], ".0f"), "rate": _num(100 * fd._float(lo["error_rate"]), ".1f"),
                    "n": _num(lo["n"], ",.0f")},
            "high": {"value": _num(hi["value"], ".0f"), "rate": _num(100 * fd._float(hi["error_rate"]), ".1f"),
                     "n": _num(hi["n"], ",.0f")},
        }  # fmt: skip
    empty = [p.empty for p in drawn if p.empty]
    if empty:
        n = [sum(fd._float(r["n"]) for r in rows) for rows in empty]
        rate = [sum(fd._float(r["wrong"]) for r in rows) / k for rows, k in zip(empty, n, strict=True)]
        tops = [max(rows, key=lambda r: fd._float(r["n"])) for rows in empty]
        facts["empty"] = {
            "n": _span(n, ",.0f"),
            "wrong": _pct(rate),
            "rated": [_num(v, ".0f") for v in sorted({fd._float(r["value"]) for r in tops})],
            "share": _pct([fd._float(r["n"]) / k for r, k in zip(tops, n, strict=True)]),
        }
    if flat:
        facts["flat"] = {
            "count": len(flat),
            "what": "forced output ratings" if all(p.column == "per output, forced" for p in flat) else "ratings",
            "given": [_num(v, ".0f") for v in sorted({p.one_value[0] for p in flat if p.one_value})],
            "share": _pct([p.one_value[1] for p in flat if p.one_value]),
            "unit": "outputs" if all(p.table.level == "document" for p in flat) else "items",
            "one_value": _num(100 * fd.ONE_VALUE_SHARE, ".0f"),
            "readable": fd.READABLE_ITEMS,
        }
    return facts


def order(
    by_value: Mapping[str, Sequence[Mapping[str, Any]]], flat: Mapping[tuple[str, str], str] | None = None
) -> Caption:
    """The message of the order figure, worded by ``templates/order.md.j2`` from :func:`order_facts`."""
    return render("order", order_facts(by_value, flat))


def order_facts(
    by_value: Mapping[str, Sequence[Mapping[str, Any]]], flat: Mapping[tuple[str, str], str] | None = None
) -> dict[str, Any]:
    """What the order figure's caption says: which prompt orders move the forced rating or its
    expected rating (``moves``: the paired shift's interval excludes 0), by how much, the order that
    moves most first, and which change either rating's AUROC beyond its interval (``changed``);
    where none does, how far the AUROC differences' intervals reach (``allowed``) and each rating's
    default-order AUROC (``default``). ``flat``: what a rating that hardly varies in the default
    order says of itself ("96% one value"), by (run, value), written beside its default-order AUROC
    (a reader otherwise takes 0.496 for a scale that ranks at chance)."""
    flat = flat or {}
    moves: list[tuple[float, dict[str, Any]]] = []
    changed: list[dict[str, str]] = []  # the orders that change a rating's AUROC beyond its interval
    runs: list[str] = []
    sizes: set[int] = set()
    allowed: list[tuple[float, float]] = []
    default: dict[str, dict[str, str]] = {}  # a rating's default-order AUROC, as written, with its flat note
    names = {"rating": "the forced rating", "expected_rating": "the expected rating"}
    keys = list(dict.fromkeys((r["run"], r["variant_b"]) for rows in by_value.values() for r in rows))
    for run, variant in keys:
        runs.append(run)
        shifts = []
        largest = 0.0  # the largest shift this order makes: the caption leads with the order that moves most
        for value, rows in by_value.items():
            r = next((x for x in rows if (x["run"], x["variant_b"]) == (run, variant)), None)
            if r is None:
                continue
            sizes.add(int(fd._float(r["n"])))
            shift, low, high = (fd._float(r[k]) for k in ("mean_shift", "shift_low", "shift_high"))
            if low > 0 or high < 0:
                share = fd._float(r.get("share_changed"))  # drawn under the written rating's marker
                shifts.append({
                    "rating": names[value],
                    "shift": interval(shift, low, high, spec="+.3f", bounds="+.3f"),
                    "changed": fd.small_share(share) if value == "rating" and share == share else "",
                })  # fmt: skip
                largest = max(largest, abs(shift))
            lo, hi = fd._float(r["auroc_diff_low"]), fd._float(r["auroc_diff_high"])
            if lo > 0 or hi < 0:
                changed.append(
                    {"order": order_label(variant), "rating": names[value], "difference": _num(r["auroc_diff"], "+.3f")}
                )
            elif not (math.isnan(lo) or math.isnan(hi)):
                allowed.append((lo, hi))
            if not math.isnan(fd._float(r.get("auroc_a"))) and value not in default:
                default[value] = {
                    "rating": names[value],
                    "auroc": _num(r["auroc_a"]),
                    "note": flat.get((run, value), ""),
                }
        if shifts:
            moves.append((largest, {"order": order_label(variant), "shifts": shifts}))
    return {
        "where": ", ".join(dict.fromkeys(_dataset(r) for r in runs)),
        "n": _span(sorted(sizes), ","),
        "moves": [m for _, m in sorted(moves, key=lambda m: -m[0])],
        "changed": changed,
        "allowed": {"low": _num(min(a for a, _ in allowed), "+.3f"), "high": _num(max(b for _, b in allowed), "+.3f")}
        if allowed
        else None,
        "default": list(default.values()),
    }
