"""Write ``results/FINDINGS.md`` (every finding) and the README's findings block (the main ones)
from named cells of the stored tables.

A finding is facts and wording kept apart: :mod:`.facts` names the cells it quotes (a table, the
column values that pick its row, the column) and computes the few facts a sentence rests on;
its template ``templates/<name>.md.j2`` words them (:mod:`.wording`), so a wording edit touches a
template only. Every number is written through a filter that reads its cell and records it;
``results/FINDINGS.cells.csv`` lists each quoted cell, and ``tests/test_findings.py`` reads every
one of them again by its row and column, checks that the texts written are what this package
writes now (nothing stale), and that the prose holds no decimal number that is not a quoted cell.

    .venv/bin/python -m construct_eval.studies.findings          # rewrite FINDINGS.md, its cells and the README block
    .venv/bin/python -m construct_eval.studies.findings --check  # exit 1 if any of them is out of date

A few counts no analysis table holds (what the plausibility checks accept, the natural study's two
error patterns) are computed from the run files (:mod:`.counts`) and written first to
``results/FINDINGS.counts.csv``; the findings quote them from there as cells like any other. A Holm
p-value at the bootstrap's floor (the smallest p its resamples can give, times the number of tests
Holm corrects over, both read beside the table) is written as a bound:
``p <= 0.013 after Holm over 13 tests``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from construct_eval.provenance import stage_model
from construct_eval.reports.cells import Ledger
from construct_eval.reports.tables import FLAT_TOP_SHARE, VARYING_MIN_SHARE, VARYING_MIN_VALUES
from construct_eval.studies import ROOT
from construct_eval.studies.findings import facts, wording
from construct_eval.studies.findings.counts import counts
from construct_eval.studies.findings.facts import COUNTS
from construct_eval.studies.findings.wording import holm_p, p_bound
from construct_eval.studies.notebook_words import document, say

__all__ = [
    "Finding", "build", "counts", "finding", "findings", "holm_p", "main",
    "order_bias", "p_bound", "rating_meaning", "real_error_checks", "replace_block", "replace_figure",
]  # fmt: skip

README_START = "<!-- findings: written by construct_eval/studies/findings/ from the stored tables; do not edit -->"
README_STARTS = re.compile(r"<!-- findings: written by \S+ from the stored tables; do not edit -->")
"""The block's first line, as this or an earlier version wrote it (the script was ``results/findings.py``)."""
README_END = "<!-- findings: end -->"


@dataclass
class Finding:
    title: str
    body: str
    links: list[tuple[str, str]]  # (label, path relative to the repository)
    in_readme: bool
    short: str = ""
    """The README's form: the one or two numbers that carry the finding, each with its n; the
    full finding (every number, every caveat) is in FINDINGS.md."""
    pending: str = ""
    """While the finding is not in the README (its study still running): a paragraph under the
    README's list saying where its interim answer is, so the README never claims a study is under
    way after it is done, or forgets one that is."""
    readme_links: int | None = None
    """How many of ``links`` the README bullet cites (None: all)."""

    def markdown(self, strip: str = "", prefix: str = "") -> str:
        """The finding as a Markdown bullet; links relative to the file it goes in (``strip`` is
        the folder prefix that file lives in, ``prefix`` what leads there from a deeper folder:
        ``strip="results/", prefix="../"`` for a notebook in ``results/notebooks/``)."""
        cites = ", ".join(f"[{label}]({prefix}{path.removeprefix(strip)})" for label, path in self.links)
        return f"- **{self.title}** {self.body.rstrip('.')}. Tables: {cites}."

    def readme_markdown(self) -> str:
        """The finding's short form as a README bullet, citing the tables its numbers come from and
        the full finding."""
        if not self.short:
            raise SystemExit(f"{self.title!r} is in the README but has no short form")
        cites = ", ".join(f"[{label}]({path})" for label, path in self.links[: self.readme_links])
        return f"- **{self.title}** {self.short.rstrip('.')} ({cites}; [in full](results/FINDINGS.md))."


def finding(name: str, ledger: Ledger) -> Finding:
    """The finding ``name`` (a function of :mod:`.facts` and its template), its numbers quoted
    through ``ledger`` in the order they are written."""
    spec = getattr(facts, name)(ledger.root)
    text = wording.render(name, ledger, spec.values)
    title = text["title"]
    return Finding(
        title[:1].upper() + title[1:],
        text["body"],
        spec.links,
        spec.in_readme,
        text.get("short", ""),
        text.get("pending", ""),
        spec.readme_links,
    )


def findings(ledger: Ledger) -> list[Finding]:
    """Every finding, in the order of :data:`.facts.FINDINGS`."""
    return [finding(f.__name__, ledger) for f in facts.FINDINGS]


def rating_meaning(ledger: Ledger) -> Finding:
    """What each value of the forced field rating means as an error rate (notebook 03 shows it)."""
    return finding("rating_meaning", ledger)


def order_bias(ledger: Ledger) -> Finding:
    """Whether the prompt order moves the rating (notebook 04 shows it)."""
    return finding("order_bias", ledger)


def real_error_checks(ledger: Ledger, *, short: bool = False, flat: bool = True) -> str:
    """The plausibility checks within filled fields on each run with a generator's own errors,
    worded as the findings word them (``short``: the two ends only; ``flat``: False leaves out
    where they are flat, for a bullet with no room for it)."""
    facts_ = {"runs": facts.real_error_checks(ledger.root), "short": short, "flat": flat}
    return wording.render("real_error_checks", ledger, facts_)["text"]


def build(root: Path = ROOT, counts_text: str | None = None) -> tuple[str, str, str]:
    """(FINDINGS.md, FINDINGS.cells.csv, the README block) as they should be now, from the tables
    under ``root``. The findings read some counts from :data:`COUNTS`: without ``counts_text`` (the
    caller has not computed and kept the file itself, as :func:`main` does) they are computed here
    from ``root``'s run files and the file is written where it differs, so a tree that has the run
    files and tables but not the file (another revision's, in ``diff_tables.sh``) is read whole."""
    if counts_text is None:
        counts_text, path = counts(root), root / COUNTS
        if not path.exists() or path.read_text() != counts_text:
            path.write_text(counts_text)
    ledger = Ledger(root)
    written = findings(ledger)
    header = document("findings_header", varying_values=VARYING_MIN_VALUES,
                      varying_share=f"{VARYING_MIN_SHARE:.0%}", flat_top=FLAT_TOP_SHARE)  # fmt: skip
    md = [
        header,
        "",
        *[f.markdown(strip="results/") for f in written],
        "",
    ]
    out = io.StringIO()
    writer = csv.DictWriter(out, ["table", "where", "column", "format", "quoted"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(ledger.rows())
    pending = [f"\n{f.pending}" for f in written if not f.in_readme and f.pending]
    readme = "\n".join([README_START, *[f.readme_markdown() for f in written if f.in_readme], *pending, README_END])
    return "\n".join(md), out.getvalue(), readme


def replace_block(text: str, block: str) -> str:
    start = README_STARTS.search(text)
    if start is None or README_END not in text:
        raise SystemExit(f"README.md has no findings block ({README_START} ... {README_END})")
    head, rest = text[: start.start()], text[start.end() :]
    _, tail = rest.split(README_END, 1)
    return head + block + tail


README_FIGURE = "detect_field_filled"
"""The one figure the README shows; its caption is the figure's message (``results/figures/manifest.json``)."""
FIGURE_START = (
    "<!-- figure: the README's figure and its message, written by construct_eval/studies/findings/"
    " from results/figures/manifest.json; do not edit -->"
)
FIGURE_STARTS = re.compile(r"<!-- figure: [^\n]*-->")


def panel_models(root: Path, datasets: list[str]) -> str:
    """Which models made the figure's panels, from each run's ``run.json``: "Generator:
    Qwen2.5-Coder-0.5B on financial NER, Qwen2.5-Coder-1.5B on the other two; judge:
    Qwen2.5-Coder-1.5B on all." (a model shared by every panel is said once)."""
    from construct_eval.display.style import model_label, paper_dataset_label

    def used(role: str) -> dict[str, list[str]]:
        by: dict[str, list[str]] = {}
        for name in datasets:
            meta = json.loads((root / "results/runs" / name / "run.json").read_text())
            model = stage_model(meta, role)
            if model:
                by.setdefault(model_label(model), []).append(paper_dataset_label(name)[0])
        return by

    def ranked(role: str) -> list[tuple[str, list[str]]]:  # fewest datasets first
        return sorted(used(role).items(), key=lambda kv: len(kv[1]))

    return say("readme_figure", "panel_models", ranked("generator"), ranked("judge"))


def replace_figure(text: str, root: Path = ROOT) -> str:
    """The README with its figure block (from its marker to the next heading) made from the
    figure's entry in the figures' manifest: what it shows as the image's text, its message as
    the caption."""
    entry = json.loads((root / "results/figures/manifest.json").read_text())["files"][f"{README_FIGURE}.png"]
    found = FIGURE_STARTS.search(text)
    if found is None:
        raise SystemExit("README.md has no figure block (<!-- figure: ... -->)")
    end = text.index("\n## ", found.end())
    block = (
        f"{FIGURE_START}\n![{entry['what'][:1].upper()}{entry['what'][1:]}](results/figures/{README_FIGURE}.png)\n\n"
        + say("readme_figure", "caption", entry["headline"], panel_models(root, entry["datasets"]))  # its first clause
        + "\n"
    )
    return text[: found.start()] + block + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a written file is out of date")
    args = parser.parse_args(argv)
    counts_path = ROOT / COUNTS
    counts_text = counts(ROOT)
    if args.check and not counts_path.exists():
        print(f"out of date: {COUNTS} (run python -m construct_eval.studies.findings)")
        return 1
    if not args.check and (not counts_path.exists() or counts_path.read_text() != counts_text):
        counts_path.write_text(counts_text)  # first: the findings read their counts from it
        print(f"wrote {COUNTS}")
    md, cells, block = build(ROOT, counts_text)
    readme_path = ROOT / "README.md"
    targets = {
        counts_path: counts_text,
        ROOT / "results/FINDINGS.md": md,
        ROOT / "results/FINDINGS.cells.csv": cells,
        readme_path: replace_figure(replace_block(readme_path.read_text(), block)),
    }
    stale = [p for p, text in targets.items() if not p.exists() or p.read_text() != text]
    if args.check:
        for p in stale:
            print(f"out of date: {p.relative_to(ROOT)} (run python -m construct_eval.studies.findings)")
        return 1 if stale else 0
    for p in stale:
        p.write_text(targets[p])
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
