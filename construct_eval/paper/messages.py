"""Each main figure's message: one sentence, computed from the numbers the figure draws.

A main figure answers one question (:mod:`~construct_eval.paper.figures`); its message is that
answer, written as its caption in ``figures.md`` and the manifest. The words are chosen by the
numbers, never typed in: a comparison is said to favour one score only where the two 95%
intervals are apart (a conservative reading of a difference; the paired tests are in the run's
tables), and every number quoted is one the figure draws, rounded as the tables round it (AUROC
and rating points to three decimals, error rates and shares found to a tenth of a percent or a
whole percent).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from construct_eval.display.style import dataset_label, display_name, order_label
from construct_eval.paper import figure_data as fd

JUDGE_ROLES = frozenset({"judge", "judge-free", "expected", "expected-free", "p-correct", "lowest", "lowest-expected"})
"""The judge's own scores (its written rating, expected rating, P(correct), their field minima)."""


def _plain(label: str) -> str:
    """A score's label in a sentence: without the figure's "(no labels)" reminder; the token
    log-probs named as the generator's."""
    label = re.sub(r" \((no labels|uses the labels|uses labels)\)", "", label)
    return "generator's token log-probs" if label == "token log-probs" else label


def _caveat(label: str, dataset: str) -> str:
    """The plausibility checks on planted errors say how they were built: knowing the planted kinds."""
    planted = dataset_label(dataset)[1].startswith("planted")
    return f"{label}, built knowing the planted kinds," if planted and label.startswith("plausibility") else label


def _dataset(d: str) -> str:
    """A run in a sentence: "financial NER with planted errors", "... with the generator's errors"."""
    name, how = dataset_label(d)
    how = how.split(",")[0]
    return f"{name} with {'the ' if how.startswith('generator') else ''}{how}"


def _auroc(value: float, low: float, high: float) -> str:
    return f"{value:.3f}" if math.isnan(low) else f"{value:.3f} [{low:.3f}, {high:.3f}]"


def _span(values: Sequence[float], fmt: str = ".3f") -> str:
    lo, hi = min(values), max(values)
    return f"{lo:{fmt}}" if f"{lo:{fmt}}" == f"{hi:{fmt}}" else f"{lo:{fmt}}-{hi:{fmt}}"


def _counted(counts: Counter[str]) -> str:
    return ", ".join(f"the {name} on {k}" for name, k in counts.most_common())


def _best(rows: Sequence[Any], value: Any) -> Any:
    return max(rows, key=value) if rows else None


def detection(estimates: Sequence[fd.Estimate], items: str) -> str:
    """The message of a main detection figure: on how many of the datasets the judge rated a
    label-free score that is not the judge's finds ``items`` better than the judge's best score
    (intervals apart), which scores those are, and the range of the judge's best."""
    panels = list(dict.fromkeys(e.panel for e in estimates))
    label = {e.scorer: _plain(display_name(e.scorer)) for e in estimates}
    better: Counter[str] = Counter()
    behind: list[str] = []
    judge_best: list[float] = []
    for p in panels:
        mine = [e for e in estimates if e.panel == p and not e.uses_labels]
        judge = _best([e for e in mine if fd.role(e.scorer) in JUDGE_ROLES], lambda e: e.value)
        other = _best([e for e in mine if fd.role(e.scorer) not in JUDGE_ROLES], lambda e: e.value)
        if judge is None:
            continue
        judge_best.append(judge.value)
        if other is not None and other.low > judge.high:
            better[_caveat(label[other.scorer], other.dataset)] += 1
        elif other is not None and judge.low > other.high:
            behind.append(_dataset(judge.dataset))
    if not judge_best:
        return f"No dataset drawn has a judge score that can rank {items}."
    k, n = sum(better.values()), len(judge_best)
    said = (
        f"On {k} of the {n} datasets the judge rated, a label-free score that is not the judge's finds {items} "
        f"better than the judge's best score, their 95% intervals apart"
        + (f" ({_counted(better)})" if k else "")
        + f"; the judge's best reaches AUROC {_span(judge_best)}"
    )
    if behind:
        said += f" and leads on {', '.join(behind)}"
    return said + "."


def review(rows: Sequence[Mapping[str, Any]], unit: str, budget: int = 20) -> str:
    """The message of a main review figure: the share of the wrong ``unit`` found when reviewing
    ``budget`` % (or the nearest budget drawn), lowest score first, by the best label-free score
    that is not the judge's and by the judge's best, against a random review's share."""
    budgets = sorted({int(r["budget"]) for r in rows})
    if not budgets:
        return ""
    b = min(budgets, key=lambda x: (abs(x - budget), -x))
    at = [r for r in rows if int(r["budget"]) == b and not r["uses_labels"]]
    judge, other, names = [], [], Counter()
    for d in dict.fromkeys(r["dataset"] for r in at):
        mine = [r for r in at if r["dataset"] == d]
        j = _best([r for r in mine if fd.role(r["scorer"]) in JUDGE_ROLES], lambda r: r["recall"])
        o = _best([r for r in mine if fd.role(r["scorer"]) not in JUDGE_ROLES], lambda r: r["recall"])
        if j is not None:
            judge.append(j["recall"])
        if o is not None:
            other.append(o["recall"])
            names[_caveat(_plain(display_name(o["scorer"])), d)] += 1
    parts = []
    if other:
        parts.append(f"{_span([100 * x for x in other], '.0f')}% of them with the best label-free score that is not "
                     f"the judge's ({_counted(names)})")  # fmt: skip
    if judge:
        parts.append(f"{_span([100 * x for x in judge], '.0f')}% with the judge's best score")
    n = len({r["dataset"] for r in at})
    return (
        f"Reviewing the {b}% of {unit} a score trusts least finds {' and '.join(parts)}, across {n} datasets; "
        f"a random {b}% finds {b}% of them."
    )


def meaning(tables: Sequence[fd.ValueTable], min_items: int = 20, flat_share: float = 0.9) -> str:
    """The message of the meaning figure: in how many of the ratings drawn a lower rating is wrong
    less often than a higher one (Wilson intervals apart, values with at least ``min_items``
    items), the widest such pair as an example, and how many ratings give one value to at least
    ``flat_share`` of their items."""
    out_of_order = []
    flat = 0
    for t in tables:
        counts = [fd._float(r["n"]) for r in t.rows]
        if counts and max(counts) >= flat_share * sum(counts):
            flat += 1
        kept = sorted(
            (r for r in t.rows if fd._float(r["n"]) >= min_items and not math.isnan(fd._float(r.get("error_rate")))),
            key=lambda r: fd._float(r["value"]),
        )
        pairs = [
            (fd._float(hi["error_low"]) - fd._float(lo["error_high"]), t, lo, hi)
            for i, lo in enumerate(kept)
            for hi in kept[i + 1 :]
            if fd._float(lo["error_high"]) < fd._float(hi["error_low"])
        ]
        if pairs:
            out_of_order.append(max(pairs, key=lambda p: p[0]))
    n = len(tables)
    said = f"A 1-10 rating is not an error rate: in {len(out_of_order)} of the {n} ratings drawn a lower rating is wrong less often than a higher one, their intervals apart"
    if out_of_order:
        _, t, lo, hi = max(out_of_order, key=lambda p: p[0])
        unit = "output" if t.level == "document" else "field"
        said += (
            f" (per {unit} on {_dataset(t.dataset)}, a {fd._float(lo['value']):.0f} is "
            f"{100 * fd._float(lo['error_rate']):.1f}% wrong and a {fd._float(hi['value']):.0f} "
            f"{100 * fd._float(hi['error_rate']):.1f}%)"
        )
    if flat:
        said += f", and {flat} give one value to at least {flat_share:.0%} of what they rate"
    return said + "."


def order(by_value: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """The message of the order figure: which prompt orders move the written rating or its
    expected rating (the paired shift's interval excludes 0), by how much, and whether any order
    changes either rating's AUROC beyond its interval."""
    moves, changed, runs, sizes = [], [], [], set()
    names = {"rating": "the written rating", "expected_rating": "the expected rating"}
    keys = list(dict.fromkeys((r["run"], r["variant_b"]) for rows in by_value.values() for r in rows))
    for run, variant in keys:
        runs.append(run)
        said = []
        for value, rows in by_value.items():
            r = next((x for x in rows if (x["run"], x["variant_b"]) == (run, variant)), None)
            if r is None:
                continue
            sizes.add(int(fd._float(r["n"])))
            low, high = fd._float(r["shift_low"]), fd._float(r["shift_high"])
            if low > 0 or high < 0:
                said.append(f"{names[value]} by {fd._float(r['mean_shift']):+.3f} [{low:+.3f}, {high:+.3f}] points")
            lo, hi = fd._float(r["auroc_diff_low"]), fd._float(r["auroc_diff_high"])
            if lo > 0 or hi < 0:
                changed.append(f"{order_label(variant)} ({names[value]}, {fd._float(r['auroc_diff']):+.3f})")
        if said:
            moves.append(f"{order_label(variant)} moves {' and '.join(said)}")
    where = ", ".join(dict.fromkeys(_dataset(r) for r in runs))
    n = f"{min(sizes):,}" if len(sizes) == 1 else f"{min(sizes):,}-{max(sizes):,}"
    head = f"On {where} ({n} outputs paired), "
    if moves:
        head += "prompt order moves the judge's ratings: " + "; ".join(moves)
    else:
        head += "no prompt order moves the judge's ratings beyond their intervals"
    if changed:
        return head + f"; it changes the AUROC for {', '.join(changed)}."
    return head + ", yet no order changes how well either rating ranks wrong outputs (every AUROC interval holds 0)."


def paper_comparison(rows: Sequence[Mapping[str, Any]]) -> str:
    """The message of the CONSTRUCT figure: CONSTRUCT's AUROC per output and per field on the
    items every method scored, and the ranking the paired tests allow (after Holm) against each
    baseline: above, below, or none (with why, where every test says the same)."""
    said = []
    for run in dict.fromkeys(r["dataset"] for r in rows):
        mine = [r for r in rows if r["dataset"] == run]
        levels = []
        above, below, why = [], [], set()
        for level, unit in (("document", "output"), ("field", "field")):
            ref = next((r for r in mine if r["level"] == level and r["key"] == "construct"), None)
            if ref is None or math.isnan(ref["auroc"]):
                continue
            levels.append(
                f"AUROC {_auroc(ref['auroc'], ref['auroc_low'], ref['auroc_high'])} per {unit} "
                f"({int(ref['n']):,} {unit}s, {int(ref['wrong']):,} wrong)"
            )
            for r in mine:
                verdict = str(r.get("auroc_ranking") or "")
                if r["level"] != level or r["key"] == "construct" or not verdict:
                    continue
                method = f"{r['method']} ({unit}s)"
                if verdict.endswith("higher"):
                    above.append(method)
                elif verdict.endswith("lower"):
                    below.append(method)
                else:
                    why.add(verdict.removeprefix("none: ").removeprefix("none "))
        if not levels:
            continue
        text = f"On {_dataset(run)}, on the items every method scored, CONSTRUCT reaches {' and '.join(levels)}"
        if above or below:
            text += "; after Holm it ranks" + (f" above {', '.join(above)}" if above else "")
            text += (" and" if above and below else "") + (f" below {', '.join(below)}" if below else "")
        elif why == {"underpowered"}:
            text += ", too few items for any paired test to rank it against its baselines"
        else:
            text += ", separated from none of its baselines after Holm"
        said.append(text)
    return "; ".join(said) + "." if said else ""
