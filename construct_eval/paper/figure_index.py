"""``figures/index.md`` of a run: each figure with what it shows, its scorer, its data and the
command that made it (``evaluate``, ``calibrate`` and ``bias`` keep it up to date).

File names of per-scorer figures carry a file-safe form of the scorer's name (long ones a
hash), so the index is where a reader finds which scorer a figure is about.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from construct_eval.kinds import Level
from construct_eval.reports.tables import file_slug
from construct_eval.types import ScorerId

KINDS = (
    ("roc_", "ROC curves of every scorer"),
    (
        "pr_",
        "precision-recall curves of every scorer (the share wrong as the no-skill line; a band where scores rate different items)",
    ),
    ("risk_coverage_", "error rate among the items accepted, most trusted first"),
    ("review_", "share of wrong items found when reviewing the lowest-scored share"),
    ("ratings_", "rating histogram, wrong and right items"),
    ("reliability_", "reliability diagram: out-of-fold P(error) against the observed error rate"),
    ("values_", "what each score value means: observed error rate, naive reading, fitted maps"),
    ("bias_", "rating shifts across prompt orders"),
    ("detection_by_planted_kind_", "AUROC of every field scorer per planted error kind, with n"),
)


def describe(stem: str, scorers: Iterable[tuple[Level | str, ScorerId | str]]) -> tuple[str, str]:
    """(what the figure shows, the name of the scorer it is about or "") for a figure's file stem.

    Per-scorer figures are named by the scorer's name or by its ``level:name`` key
    (:attr:`~construct_eval.reports.collect.ScoredItems.key`)."""
    what = next((text for prefix, text in KINDS if stem.startswith(prefix)), "figure")
    best = ""
    for level, scorer in scorers:
        name = scorer.name if isinstance(scorer, ScorerId) else scorer
        for candidate in (file_slug(name), file_slug(f"{Level(level).value}:{name}")):
            if stem.endswith(candidate) and len(candidate) > len(file_slug(best) if best else ""):
                best = name
    return what, best


def update_index(
    figures_dir: Path,
    written: Sequence[Path],
    scorers: Iterable[tuple[Level | str, ScorerId | str]],
    *,
    data: str,
    command: str,
) -> Path:
    """Record ``written`` (with ``command`` and ``data``) in ``figures_dir``/index.json and
    rewrite index.md from it; entries of figures made by other commands stay."""
    figures_dir.mkdir(parents=True, exist_ok=True)
    store = figures_dir / "index.json"
    entries = json.loads(store.read_text()) if store.exists() else {}
    scorers = list(scorers)
    for path in written:
        what, scorer = describe(path.stem, scorers)
        entries[path.name] = {"what": what, "scorer": scorer, "data": data, "command": command}
    entries = {k: v for k, v in sorted(entries.items()) if (figures_dir / k).exists()}
    store.write_text(json.dumps(entries, indent=1) + "\n")
    lines = ["# Figures", "", "| figure | what it shows | scorer | made by |", "|---|---|---|---|"]
    for name, e in entries.items():
        scorer = f"`{e['scorer']}`" if e["scorer"] else "every scorer"
        lines.append(f"| [{name}]({name}) | {e['what']} | {scorer} | `{e['command']}` on `{e['data']}` |")
    (figures_dir / "index.md").write_text("\n".join(lines) + "\n")
    return figures_dir / "index.md"
