"""The paper's question in every setting it was asked: CONSTRUCT against the generator's token log-probs.

    .venv/bin/python -m construct_eval.studies.construct_settings_report

Reads each setting's stored ``metrics/paper_comparison.csv`` (no statistic is computed here) and
writes ``results/runs/construct_settings.csv`` and ``.md``: per setting (dataset, generator,
judge and its size) and level, CONSTRUCT's AUROC and the token log-probs' on the items both
scored, CONSTRUCT minus them with its paired interval and Holm p, the items, wrong items and
documents, and whether the row is underpowered. A setting whose CONSTRUCT is still being run says
how many outputs it was asked on; one with no CONSTRUCT rows yet is listed as not run.

A third row per setting, ``filled field``, reads the fields the output filled alone, where the
run has the paired table :data:`FILLED` (``construct-eval paired --reference construct@top --level
field --by-output-kind --scorers token_logprob@top``): a pooled field AUROC mixes fields left empty,
which a score can tell apart for that alone, with filled ones (the two AUROCs there are on the
items both scored, without intervals of their own; the difference has its paired interval).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from construct_eval.csv_tables import read_rows
from construct_eval.numbers import holm_p
from construct_eval.reports.paper_comparison import family_tests
from construct_eval.reports.tables import write_table
from construct_eval.studies import RUNS

FILLED = "paired_field_construct_top_by_output_kind"
"""The paired table (in a run's ``metrics/``) of the token log-probs against CONSTRUCT per top-level
field within output kinds."""


@dataclass(frozen=True)
class Setting:
    run: str
    dataset: str
    generator: str
    judge: str
    planned: int  # outputs CONSTRUCT is to be asked on
    pilot: bool = False  # a pilot: a first look at a few outputs, not the setting's answer


NATURAL = "natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package"
SETTINGS = (
    Setting(NATURAL, "synthetic shipping notices", "Qwen2.5-Coder-1.5B", "Qwen2.5-Coder-1.5B", 200),
    Setting(
        f"{NATURAL}-judge-qwen2.5-coder-0.5b",
        "synthetic shipping notices",
        "Qwen2.5-Coder-1.5B",
        "Qwen2.5-Coder-0.5B",
        200,
    ),
    Setting(
        f"{NATURAL}-judge-smollm2-135m",
        "synthetic shipping notices",
        "Qwen2.5-Coder-1.5B",
        "SmolLM2-135M",
        10,
        pilot=True,
    ),
    Setting(
        "financial_ner-sample200-construct",
        "financial-entity sentences",
        "Qwen2.5-Coder-0.5B",
        "Qwen2.5-Coder-1.5B",
        200,
    ),
)
"""Every setting the paper's comparison is run in, in the order a reader meets them."""


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    return read_rows(path)


def _holm_words(p: str, tests: int, resamples: str) -> str:
    """A stored Holm p as the findings word it (``p <= 0.005 after Holm over 5 tests`` at the
    resamples' floor, else ``p = 0.282 after ...``); empty where the table holds none."""
    if p in ("", None):
        return ""
    return holm_p(float(p), tests, float(resamples) if resamples not in ("", None) else float("nan"))


def setting_rows(setting: Setting, runs: Path = RUNS) -> list[dict[str, Any]]:
    """The setting's rows: one per level where CONSTRUCT has scores, else one saying why not."""
    head = {"dataset": setting.dataset, "generator": setting.generator, "judge": setting.judge, "run": setting.run}
    table = _rows(runs / setting.run / "metrics" / "paper_comparison.csv")
    doc = next((r for r in table if r["level"] == "document" and r["key"] == "construct"), {})
    scored = int(float(doc.get("scored") or 0))  # outputs whose replies TLM's code could read
    asked = scored + int(float(doc.get("unscored") or 0))  # outputs CONSTRUCT was asked on
    if asked < setting.planned:
        state = f"under way ({asked} of {setting.planned} asked)"
    else:
        state = f"a pilot of {setting.planned}, complete" if setting.pilot else "complete"
    out = []
    for level in ("field", "document"):
        mine = {r["key"]: r for r in table if r["level"] == level}
        construct, logprob = mine.get("construct"), mine.get("token-logprob")
        if construct is None or not construct.get("auroc") or logprob is None:
            continue
        out.append({
            **head, "level": level, "asked": asked, "scored": scored, "planned": setting.planned,
            "state": state,
            "n": construct["n"], "wrong": construct["wrong"], "documents": construct["documents"],
            "construct_auroc": construct["auroc"], "construct_auroc_low": construct["auroc_low"],
            "construct_auroc_high": construct["auroc_high"],
            "logprob_auroc": logprob["auroc"], "logprob_auroc_low": logprob["auroc_low"],
            "logprob_auroc_high": logprob["auroc_high"],
            # the paired row is the baseline's: CONSTRUCT minus it
            "construct_minus_logprob": logprob.get("auroc_diff", ""),
            "construct_minus_logprob_low": logprob.get("auroc_diff_low", ""),
            "construct_minus_logprob_high": logprob.get("auroc_diff_high", ""), "p_holm": logprob.get("auroc_p_holm", ""),
            "holm": _holm_words(logprob.get("auroc_p_holm", ""), family_tests(table, logprob.get("auroc_holm_family", "")),
                                logprob.get("n_boot", "")),
            "ranking": logprob.get("auroc_ranking", ""), "underpowered": construct.get("underpowered", ""),
        })  # fmt: skip
    filled_rows = _rows(runs / setting.run / "metrics" / f"{FILLED}.csv")
    filled = next((r for r in filled_rows if r["fields"] == "value"), None)
    if out and filled is not None:  # the log-probs (a) against CONSTRUCT (b): CONSTRUCT minus them is -(a - b)
        ranking = {"token_logprob@top higher": "CONSTRUCT lower", "token_logprob@top lower": "CONSTRUCT higher"}.get(
            filled["ranking"], filled["ranking"]
        )
        out.append({
            **head, "level": "filled field", "asked": asked, "scored": scored, "planned": setting.planned,
            "state": state, "n": filled["n"], "wrong": filled["positives"], "documents": filled["documents"],
            "construct_auroc": filled["auroc_b"], "logprob_auroc": filled["auroc_a"],
            "construct_minus_logprob": -float(filled["difference"]),
            "construct_minus_logprob_low": -float(filled["high"]),
            "construct_minus_logprob_high": -float(filled["low"]), "p_holm": filled["p_holm"],
            "holm": _holm_words(filled["p_holm"], sum(1 for r in filled_rows if r.get("p", "") != ""), filled["n_boot"]),
            "ranking": ranking,
            "underpowered": ranking.removeprefix("none: underpowered (").removesuffix(")")
            if ranking.startswith("none: underpowered") else "",
        })  # fmt: skip
    if not out:
        out.append({**head, "level": "", "state": "not run yet: no CONSTRUCT in its paper comparison"})
    return out


def report(runs: Path = RUNS, settings: Sequence[Setting] = SETTINGS) -> list[dict[str, Any]]:
    return [row for s in settings for row in setting_rows(s, runs)]


def main(argv: Sequence[str] | None = None) -> int:
    rows = report()
    path = RUNS / "construct_settings"
    columns = [c for r in rows for c in r if c != "p_holm"]  # the p in words (a bound at the resamples' floor)
    write_table(rows, path, "CONSTRUCT against the generator's token log-probs, setting by setting (the paper"
                " comparison's numbers: on the items every method scored, one document bootstrap shared by the methods,"
                " so an interval can differ in its third decimal from the run's detection table; filled field: the"
                " fields the output filled, paired on the items both scored)", md_columns=list(dict.fromkeys(columns)))  # fmt: skip
    print(f"wrote {path.with_suffix('.csv')} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
