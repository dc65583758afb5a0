"""The tables and sentences notebook 02 (error detection) shows, each number read from a stored table.

Notebook 02 asks which trust score finds the wrong outputs and the wrong fields. These functions
turn the recorded runs' stored tables (``metrics/*.csv``, ``results/runs/table_fields.csv``) into
the short Markdown it shows, so that its cells stay short: the answer (one sentence per level and
one table), the paired tables against the judge's forced rating, the data-table rebuild field by
field, the paper set at a glance and the own-run example. Every number is quoted from one table
cell through a :class:`~construct_eval.reports.cells.Ledger` (:attr:`ErrorDetection.ledger` keeps
what was quoted) and printed with its n; nothing here computes a new statistic. Scores are named
by :func:`construct_eval.scorer_labels.display_name`; no internal identifier reaches the text.

    from construct_eval.studies import error_detection_notebook as ed
    nb = ed.ErrorDetection(runs_root, out_dir)
    nb.answer(study, generated)
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from construct_eval.csv_tables import read_rows
from construct_eval.display.style import paper_dataset_label as dataset_label
from construct_eval.paper.figure_set import left_out_words, paper_set, read_left_out
from construct_eval.power import too_wide
from construct_eval.reports.cells import Cell, CellError, Ledger, read_table
from construct_eval.scorer_labels import display_name
from construct_eval.studies.notebook_figures import notebook_link
from construct_eval.studies.notebook_words import say
from construct_eval.types import ScorerId

FORCED_DOC = "judge-doc[sec:r-s-o|fields:original]"
"""The main study's judge rating per sentence, written alone (the default order, named)."""
FREE_DOC = "judge-doc[sec:r-s-o|fields:original|ask:free]"
"""The same judge asked the paper's way: an explanation, then the rating."""
FORCED = ("judge-doc", FORCED_DOC, "judge-field")
"""The judge's forced rating in every run (per output, per field)."""
DOC_PAIRS = "paired_document_judge-doc_sec_r-s-o_fields_original_"
"""The main study's paired table per output: each score against the judge's forced rating."""
FIELD_PAIRS = "paired_field_judge-field_by_output_kind"
"""A run's paired table per field within filled and empty fields, against the forced rating."""
ELICITATION = "grammar:rating-only"
"""How the runs' judge was first asked: a name without "free" means the rating forced alone."""
CEILINGS = {"contact_rule"}
"""Label-free but written knowing the data's templates: a ceiling, never a score to ship."""
TABLE_FIELDS = {
    "num_rows": "row count",
    "num_columns": "column count",
    "column_types": "column types",
    "column_max": "column maxima",
    "column_min": "column minima",
    "identifier_first": "first identifier",
    "identifier_last": "last identifier",
    "identifier_shortest": "shortest identifier",
}
"""The data-table rebuild's top-level fields in words."""


def num(x: object) -> float:
    """A table cell as a float; an empty cell is NaN."""
    return float(x) if x not in ("", None) else float("nan")  # type: ignore[arg-type]


def score_name(scorer: str, run: str = "") -> str:
    """A score in a reader's words (:func:`display_name`); a combination names the scores it
    combines (the plausibility checks' name says they were built for the planted kinds)."""
    return display_name(scorer, elicitation=ELICITATION)  # a combination lists what it combines


def same_items(a: str, b: str) -> bool:
    """Whether two scores of a paired row are about the same kind of item: a field score at another
    granularity than the reference (the log-probs per leaf against the judge per top-level field) is
    compared on other items, and is no answer to how the reference's own items are ranked."""
    return ScorerId.parse(a).item_granularity == ScorerId.parse(b).item_granularity


def default_form(scorer: str) -> bool:
    """A score in its default form: no other prompt order and no combination (notebook 04 has the
    orders, each run's paired table the combinations)."""
    sid = ScorerId.parse(scorer)
    orders = set((sid.variant or "").split("|")) - {"", "sec:r-s-o", "fields:original", "ask:free"}
    return not sid.is_combination and not orders


def _say(sentence: str, /, *args: object, **facts: object) -> str:
    """A sentence of ``templates/error_detection_notebook.md.j2``."""
    return say("error_detection_notebook", sentence, *args, **facts)


def verdict(ranking: str, auroc: float | None = None, reference: float | None = None) -> str:
    """A paired table's ``ranking`` in words: ahead of / behind the reference, or why neither. A
    score at chance is ahead only because the reference (the forced rating) is below chance, and it says so."""
    if ranking.endswith(" higher") and auroc == 0.5 and reference is not None and reference < 0.5:
        return _say("ahead_by_chance")
    if ranking.endswith(" higher"):
        return "ahead"
    if ranking.endswith(" lower"):
        return "behind"
    return ranking.replace("none after Holm", "not shown after Holm").replace("none: ", "not shown: ")


class ErrorDetection:
    """The recorded runs under ``runs_root``, read for a notebook executed into ``out_dir``."""

    def __init__(self, runs_root: str | Path, out_dir: str | Path) -> None:
        self.runs = Path(runs_root)
        self.root = self.runs.resolve().parents[1]  # the repository the recorded runs live in
        self.out_dir = Path(out_dir)
        self.ledger = Ledger(self.root)

    # ------------------------------------------------------------------ reading
    def path(self, run: str, name: str) -> str:
        """A run's stored table, relative to the repository (a :class:`Cell`'s table)."""
        return os.path.relpath((self.runs / run / "metrics" / f"{name}.csv").resolve(), self.root)

    def table(self, run: str, name: str) -> list[dict[str, str]]:
        return read_rows(self.runs / run / "metrics" / f"{name}.csv")

    def link(self, run: str, name: str, text: str) -> str:
        """A link to a stored table (its ``.md``), relative to where the executed notebook lives."""
        target = (self.runs / run / "metrics" / f"{name}.md").resolve()
        return f"[{text}]({notebook_link(target, self.out_dir.resolve().parent)})"

    def q(self, cell: Cell, fmt: str = "3f") -> str:
        return self.ledger.quote(cell, fmt)

    def interval(self, cell: Cell, **kw: Any) -> str:
        """``x [low, high]``; a cell with no interval says so."""
        row = cell.row(self.root)
        low = kw.get("low") or f"{cell.column}_low"
        if row.get(low, "") == "":
            return f"{self.q(cell)} (no interval)"
        return self.ledger.interval(cell, **kw)

    def n(self, cell: Cell, n: str = "n", wrong: str = "positives") -> str:
        """``n = 1,284, 265 wrong`` from the row of ``cell``."""
        return f"n = {self.q(cell.with_column(n), 'int')}, {self.q(cell.with_column(wrong), 'int')} wrong"

    # ------------------------------------------------------------------ the answer
    def _row(self, level: str, cell: Cell, name: str, versus: Cell | None, n_cols: tuple[str, str]) -> dict[str, str]:
        """One row of the answer's table: the score on its items (its own n) and, where it is not
        the reference, its paired difference from the forced rating on the items both rated."""
        row = {"items": level, "score": name, "n (wrong)": "", "AUROC [95% CI]": self.interval(cell),
               "minus the forced rating, same items [95% CI]": "reference", "after Holm": ""}  # fmt: skip
        n, wrong = n_cols
        row["n (wrong)"] = f"{self.q(cell.with_column(n), 'int')} ({self.q(cell.with_column(wrong), 'int')})"
        if versus is not None:
            vr = versus.row(self.root)
            row["minus the forced rating, same items [95% CI]"] = (
                f"{self.ledger.interval(versus, '+3f', low='low', high='high')} "
                f"(n = {self.q(versus.with_column('n'), 'int')})"
            )
            row["after Holm"] = verdict(vr["ranking"], num(vr["auroc_a"]), num(vr["auroc_b"]))
        return row

    def answer(self, study: str, generated: str) -> str:
        """One sentence per level and one table: the main study's sentences, filled and empty
        fields, and the filled fields of a generator's real errors; every number with its n."""
        det, kinds = self.path(study, "detection"), self.path(study, "detection_by_output_kind")
        doc_pairs = self.path(study, DOC_PAIRS)
        kind_pairs = self.path(study, FIELD_PAIRS)
        gkinds = self.path(generated, "detection_by_output_kind")
        gpairs = self.path(generated, FIELD_PAIRS)

        def d(scorer: str) -> Cell:
            return Cell(det, {"level": "document", "scorer": scorer}, "auroc")

        def k(table: str, scorer: str, fields: str) -> Cell:
            return Cell(table, {"scorer": scorer, "fields": fields}, "auroc")

        def dp(a: str) -> Cell:
            return Cell(doc_pairs, {"a": a, "b": FORCED_DOC}, "difference")

        def kp(table: str, a: str, fields: str) -> Cell:
            return Cell(table, {"fields": fields, "a": a, "b": "judge-field"}, "difference")

        def field(group: str, table: str, pairs: str, scorer: str, fields: str, name: str) -> dict[str, str]:
            """A field row, paired against the judge's forced rating (the reference row itself unpaired)."""
            versus = None if scorer == "judge-field" else kp(pairs, scorer, fields)
            return self._row(group, k(table, scorer, fields), name, versus, ("n", "wrong"))

        sentences, filled, empty = "sentences (planted errors)", "filled fields (planted)", "empty fields (planted)"
        real = "filled fields (a generator's errors)"
        dn = ("n", "positives")
        rows = [
            self._row(sentences, d(FORCED_DOC), "judge rating (forced)", None, dn),
            self._row(sentences, d(FREE_DOC), "judge rating (free: explanation first)", dp(FREE_DOC), dn),
            self._row(sentences, d("p-correct"), "P(correct)", dp("p-correct"), dn),
            field(filled, kinds, kind_pairs, "judge-field", "value", "judge rating (forced)"),
            field(filled, kinds, kind_pairs, "judge-field:expected", "value", "expected rating"),
            field(filled, kinds, kind_pairs, "p-correct@top", "value", "P(correct)"),
            field(empty, kinds, kind_pairs, "judge-field", "null or empty", "judge rating (forced)"),
            field(empty, kinds, kind_pairs, "p-correct@top", "null or empty", "P(correct)"),
            field(real, gkinds, gpairs, "judge-field", "value", "judge rating (forced)"),
            field(real, gkinds, gpairs, "token_logprob@leaf", "value", "generator's token log-probs"),
        ]

        def forced(cell: Cell, wrong: str = "positives") -> dict[str, str]:  # the reference's AUROC and n
            return {"auroc": self.interval(cell), "n": self.n(cell, wrong=wrong)}

        def paired(cell: Cell) -> dict[str, str]:  # a score against the reference: its verdict, n and difference
            return {"verdict": verdict(cell.row(self.root)["ranking"]), "n": self.q(cell.with_column("n"), "int"),
                    "wrong": self.q(cell.with_column("positives"), "int"),
                    "diff": self.ledger.interval(cell, "+3f", low="low", high="high")}  # fmt: skip

        free, pc = dp(FREE_DOC), kp(kind_pairs, "p-correct@top", "null or empty")
        ex, lp = kp(kind_pairs, "judge-field:expected", "value"), kp(gpairs, "token_logprob@leaf", "value")
        empty_judge = k(kinds, "judge-field", "null or empty")
        lines = [
            _say("per_sentence", forced(d(FORCED_DOC)), paired(free)),
            _say("per_filled_field", forced(k(kinds, "judge-field", "value"), "wrong"), paired(ex)),
            _say("per_empty_field", forced(empty_judge, "wrong"), paired(pc)),
            _say("generator_errors", paired(lp)),
        ]
        forced = d(FORCED_DOC).row(self.root)
        at_chance = float(forced["auroc_low"]) <= 0.5 <= float(forced["auroc_high"])
        named = [(free, "the explained rating per sentence"), (ex, "the expected rating per filled field"),
                 (pc, "P(correct) per empty field")]  # fmt: skip
        ahead = [name for cell, name in named if verdict(cell.row(self.root)["ranking"]) == "ahead"]
        generator = verdict(lp.row(self.root)["ranking"]) == "ahead"
        # the answer first, in short sentences: the forced rating alone, then what beats it on the same items
        headline = _say("headline", at_chance, ahead, generator)
        columns = list(rows[0])
        table = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        table += ["| " + " | ".join(r[c] for c in columns) + " |" for r in rows]
        links = ", ".join([
            self.link(study, "detection", "per sentence"),
            self.link(study, DOC_PAIRS, "paired per sentence"),
            self.link(study, "detection_by_output_kind", "per field, by output kind"),
            self.link(study, FIELD_PAIRS, "paired per field"),
            self.link(generated, FIELD_PAIRS, "generator's errors, paired"),
        ])  # fmt: skip
        return headline + "\n\n" + "\n".join(lines) + "\n\n" + "\n".join(table) + "\n\n" + _say("how_counted", links)

    # ------------------------------------------------------------------ paired tables
    def planted_kinds(self, table: str = "results/figures/table_planted_kind.csv") -> str:
        """The planted-kind figure's answer, from its table (``table``, relative to the repository),
        on the rows with enough errors (``powered``): on how many kinds the judge's expected field
        rating is above chance (its AUROC interval above 0.5), its highest row, the kinds it cannot
        tell from chance; then where the forced rating lands otherwise (below chance, say). Each
        number quoted from a named cell, with its wrong count and dataset."""
        from construct_eval.display.style import PLANTED_LABELS

        rows = [r for r in read_table(self.root / table)[1] if r["powered"] == "True"]

        def side(r: Mapping[str, str]) -> str:
            return "above" if num(r["auroc_low"]) > 0.5 else "below" if num(r["auroc_high"]) < 0.5 else "chance"

        def key(r: Mapping[str, str]) -> tuple[str, str, str]:
            return r["dataset"], r["planted_kind"], r["fields"]

        def one(r: Mapping[str, str], wrong: bool = True) -> str:
            cell = Cell(table, {"dataset": r["dataset"], "planted_kind": r["planted_kind"], "fields": r["fields"],
                                "scorer": r["scorer"]}, "auroc")  # fmt: skip
            kind = PLANTED_LABELS.get(r["planted_kind"], r["planted_kind"]).removesuffix(" (truth empty)")
            name, how = dataset_label(r["dataset"])
            count = self.q(cell.with_column("n_wrong"), "int") if wrong else ""
            return _say("kind_row", kind, r["fields"] == "null or empty", self.ledger.interval(cell), count, name,
                        how.split(",")[0])  # fmt: skip

        def wide(r: Mapping[str, str]) -> bool:  # drawn hollow: too wide to rank by
            return too_wide(num(r["auroc_low"]), num(r["auroc_high"]))

        expected = {key(r): r for r in rows if r["scorer"] == "judge-field:expected" and not wide(r)}
        forced = {key(r): r for r in rows if r["scorer"] == "judge-field" and not wide(r)}
        hollow = [r for r in rows if r["scorer"] == "judge-field:expected" and wide(r)]
        if not expected:
            return ""
        above = [r for r in expected.values() if side(r) == "above"]
        chance = [r for r in expected.values() if side(r) != "above"]
        highest = one(max(above, key=lambda r: num(r["auroc"]))) if above else ""
        other = [r for k, r in forced.items() if k in expected and side(r) != side(expected[k])]
        differs = [(side(r), one(r, wrong=False)) for r in other]
        return _say("planted", len(above), len(expected), highest, [one(r) for r in chance],
                    [one(r) for r in hollow], differs)  # fmt: skip

    def paired_tables(self, study: str) -> str:
        """The main study's paired tables as a reader reads them: per output (a sentence each),
        then filled and empty fields, each score against the judge's forced rating on the same items."""
        outputs = _say("paired_heading", "Per output, a sentence each", self.link(study, DOC_PAIRS, "paired table"))
        parts = [f"{outputs}\n\n{self.paired_rows(study, DOC_PAIRS)}"]
        for fields, title in (("value", "Filled fields"), ("null or empty", "Empty fields")):
            head = _say("paired_heading", title, self.link(study, FIELD_PAIRS, "paired table"))
            parts.append(f"{head}\n\n" + self.paired_rows(study, FIELD_PAIRS, lambda r, f=fields: r["fields"] == f))
        return "\n\n".join(parts)

    def filled_pairs(self, run: str) -> str:
        """``run``'s filled fields, each score per leaf field against the judge's forced rating on
        the same fields (its paired table also holds the empty fields and the top-level scores)."""
        head = _say("paired_heading", "Filled fields", self.link(run, FIELD_PAIRS, "paired table"),
                    ", with the empty fields") + "\n\n"  # fmt: skip
        leaf = ScorerId.parse
        return head + self.paired_rows(
            run, FIELD_PAIRS, lambda r: r["fields"] == "value" and leaf(r["a"]).granularity != "top"
        )

    def floor(self, run: str, name: str) -> float:
        """The smallest p-value the table's bootstrap can give, 2 / (B + 1): a Holm p there is a bound."""
        head = (self.runs / run / "metrics" / f"{name}.md").read_text().splitlines()[0]
        return 2 / (int(re.search(r"([\d,]+) document resamples", head)[1].replace(",", "")) + 1)  # type: ignore[index]

    def paired_rows(self, run: str, name: str, keep: Callable[[Mapping[str, str]], bool] = lambda r: True) -> str:
        """Each score in its default form against the reference of a paired table: its n (wrong),
        both AUROCs on the same items, the difference with its interval, Holm's p (a bound where
        it is at the resampling floor) and what the interval allows. A score per leaf and per
        top-level field with the same numbers (a flat schema) is one row."""
        rows = sorted((r for r in self.table(run, name) if default_form(r["a"]) and keep(r)),
                      key=lambda r: -num(r["difference"]))  # fmt: skip
        least = self.floor(run, name)
        table = self.path(run, name)
        lines = [
            "| score | n (wrong) | AUROC | forced rating, same items | difference [95% CI] | Holm p "
            "| what the interval allows |",
            "|---|---|---|---|---|---|---|",
        ]
        shown: dict[tuple[str, ...], int] = {}  # a score per leaf and per top-level field, same numbers: one row
        fields_of: dict[tuple[str, ...], str] = {}
        for r in rows:
            label = score_name(r["a"], run)
            base, _, fields = label.rpartition(", ")
            twin = (
                (base, r["n"], r["auroc_a"], r["difference"]) if fields in ("leaf fields", "top-level fields") else None
            )
            if twin is not None and twin in shown:
                at, was = shown[twin], f"| {base}, {fields_of[twin]} |"
                lines[at] = lines[at].replace(was, f"| {base}, leaf and top-level fields (the same) |")
                continue
            if twin is not None:
                shown[twin], fields_of[twin] = len(lines), fields
            c = Cell(table, {k: r[k] for k in ("fields", "a", "b") if k in r}, "difference")
            bound = num(r["p"]) <= least * (1 + 1e-9)  # at the floor: p is at most this
            lines.append(
                f"| {label} | {self.q(c.with_column('n'), 'int')} ({self.q(c.with_column('positives'), 'int')}) | "
                f"{self.q(c.with_column('auroc_a'))} | {self.q(c.with_column('auroc_b'))} | "
                f"{self.ledger.interval(c, '+3f', low='low', high='high')} | "
                f"{'<= ' if bound else ''}{self.q(c.with_column('p_holm'))} | "
                f"{verdict(r['ranking'], num(r['auroc_a']), num(r['auroc_b']))} |"
            )
        shown_as = {r["a"]: f"{num(r['auroc_b']):.3f}" for r in rows}  # the reference as the table prints it
        if len(set(shown_as.values())) > 1:  # the reference column changes: say why, naming the rows
            most = max(int(r["n"]) for r in rows)
            usual = {shown_as[r["a"]] for r in rows if int(r["n"]) == most}  # on every item the table compares
            fewer = list(dict.fromkeys(score_name(r["a"], run) for r in rows if shown_as[r["a"]] not in usual))
            lines.append("\n" + _say("forced_varies", fewer))
        return "\n".join(lines)

    # ------------------------------------------------------------------ tables, field by field
    def table_fields(self, run: str) -> str:
        """The data-table rebuild: one sentence, and each top-level field with enough wrong and
        right values (at least 10 of each, an interval no wider than 0.3) for the judge's forced
        rating and the generator's token log-probs; the underpowered fields are only counted (they
        are in the linked field-by-field table)."""
        per_field = os.path.relpath((self.runs / "table_fields.csv").resolve(), self.root)
        rows = read_rows(self.root / per_field)
        fields = list(dict.fromkeys(r["field"] for r in rows))
        powered = [f for f in fields if all(not r["underpowered"] for r in rows if r["field"] == f)]
        doc = Cell(self.path(run, "detection"), {"level": "document", "scorer": "token_logprob"}, "prevalence")
        judge = Cell(self.path(run, "detection"), {"level": "field", "scorer": "judge-field"}, "auroc")

        def tf(field: str, scorer: str, column: str = "auroc") -> Cell:
            return Cell(per_field, {"field": field, "scorer": scorer}, column)

        def cell(field: str, scorer: str) -> str:
            if self.ledger.text(tf(field, scorer, "spread")) == "constant":
                return "constant (0.5 by construction)"
            return self.interval(tf(field, scorer))

        within = os.path.relpath((self.root / "results" / "figures" / "table_within_field.csv").resolve(), self.root)

        def filled(field: str) -> str:  # the judge's expected rating within the tables that filled the field
            c = Cell(within, {"dataset": run, "scorer": "judge-field:expected", "field": field}, "auroc")
            try:
                n = f"{self.q(c.with_column('n'), 'int')} ({self.q(c.with_column('wrong'), 'int')})"
            except CellError:  # a field the figure set's table leaves out
                return "-"
            return f"{self.interval(c)}, {n}"

        lines = [  # the two pooled columns side by side, the filled-only one apart: compare within a set of items
            "| field | pooled: n (wrong) | pooled: judge rating (forced) | pooled: generator's token log-probs "
            "| filled only: judge's expected rating, n (wrong) |",
            "|---|---|---|---|---|",
        ]
        for f in powered:
            lines.append(
                f"| {TABLE_FIELDS.get(f, f.replace('_', ' '))} | {self.q(tf(f, 'judge-field', 'n'), 'int')} "
                f"({self.q(tf(f, 'judge-field', 'wrong'), 'int')}) | {cell(f, 'judge-field')} "
                f"| {cell(f, 'token_logprob@top')} | {filled(f)} |"
            )
        rel = notebook_link(self.runs / "table_fields.md", self.out_dir.resolve().parent)
        intro = _say("table_fields_intro", self.q(doc, "pct0"), self.q(doc.with_column("n"), "int"),
                     self.q(judge.with_column("n"), "int"), self.q(judge.with_column("positives"), "int"),
                     self.interval(judge), len(powered), len(fields))  # fmt: skip
        rest = _say("table_fields_rest", len(fields) - len(powered), rel)
        return f"{intro}\n\n" + "\n".join(lines) + f"\n\n{rest}"

    # ------------------------------------------------------------------ the paper set at a glance
    def _versus_forced(self, run: str, level: str) -> tuple[str, Cell, str, list[dict[str, str]]] | None:
        """The judge's forced rating of ``run`` at ``level`` and the paired table against it, on the
        same items: per output, or per field within filled fields where the run has that table
        (pooled fields mix empty and filled ones), else pooled. (items, the judge's cell, its wrong
        column, the paired rows); None where the rating or its table is missing."""
        metrics = self.runs / run / "metrics"
        det = self.path(run, "detection")
        rows = self.table(run, "detection")
        judge = next((r for r in rows if r["level"] == level and r["scorer"] in FORCED and r["auroc"]), None)
        if judge is None or judge.get("positives", "") == "":  # no wrong/right split: nothing to rank
            return None
        cell = Cell(det, {"level": level, "scorer": judge["scorer"]}, "auroc")
        if level == "document":
            for path in sorted(metrics.glob("paired_document_judge-doc*.csv")):
                prs = self.table(run, path.stem)
                if prs and prs[0]["b"] == judge["scorer"]:
                    return "outputs", cell, "positives", prs
            return "outputs", cell, "positives", []
        if (metrics / "paired_field_judge-field_by_output_kind.csv").exists():
            kinds = Cell(
                self.path(run, "detection_by_output_kind"), {"scorer": "judge-field", "fields": "value"}, "auroc"
            )
            prs = [r for r in self.table(run, "paired_field_judge-field_by_output_kind") if r["fields"] == "value"]
            return "filled fields", kinds, "wrong", prs
        pooled = (
            self.table(run, "paired_field_judge-field") if (metrics / "paired_field_judge-field.csv").exists() else []
        )
        return "fields (empty and filled pooled)", cell, "positives", pooled

    def judged_subset(self, run: str) -> str:
        """``"; the judge rated 20 docs, not the other 30"`` where the judge rated only some of ``run``'s
        documents (its per-output row counts the others as not scored), else nothing: a label's
        document count is the run's, the row's n the judge's."""
        rows = [r for r in self.table(run, "detection") if r["level"] == "document" and r["scorer"] in FORCED]
        if not rows or not rows[0].get("left_out_why", "").startswith("document not scored"):
            return ""
        c = Cell(self.path(run, "detection"), {"level": "document", "scorer": rows[0]["scorer"]}, "documents")
        if num(rows[0]["left_out"]) <= 0:
            return ""
        return _say("judged_subset", self.q(c, "int"), self.q(c.with_column("left_out"), "int"))

    def overview(self) -> str:
        """Each run of the paper set and level: the judge's forced rating on the items compared (its
        n and AUROC) and the label-free scores a paired test puts ahead of it on those items
        (Holm-corrected); no winner by point estimate. The runs the paper figures leave out are
        named under it."""
        left_out = read_left_out(self.root / "results" / "figures" / "left_out.txt")
        lines = ["| dataset | items | judge's forced rating: n (wrong), AUROC | label-free scores ahead of it on the same items (paired, Holm) |",
                 "|---|---|---|---|"]  # fmt: skip
        for path in paper_set(self.runs, left_out):
            run = path.name
            name, how = dataset_label(run)
            reader = f"{name} ({how.split(', Qwen')[0]}{self.judged_subset(run)})"
            for level in ("document", "field"):
                found = self._versus_forced(run, level)
                if found is None:
                    continue
                items, c, wrong, prs = found
                flat = c.row(self.root).get("rating_use", "").startswith("flat (10:100%") or (
                    c.row(self.root).get("distinct_scores") == "1"
                )
                rating = "constant" if flat else self.interval(c)
                judged = f"{self.q(c.with_column('n'), 'int')} ({self.q(c.with_column(wrong), 'int')}), {rating}"
                names = [score_name(r["a"], run) for r in prs
                         if r["ranking"].endswith(" higher") and "uses-labels" not in r["a"]
                         and same_items(r["a"], r["b"])
                         and ScorerId.parse(r["a"]).family not in CEILINGS
                         and (default_form(r["a"]) or ScorerId.parse(r["a"]).is_combination)]  # fmt: skip
                names = list(dict.fromkeys(re.sub(r", (leaf|top-level) fields$", "", n) for n in names))
                ahead = "<br>".join(names) or "none" if prs else "not tested (no paired table)"  # a name holds ";"
                lines.append(f"| {self.link(run, 'detection', reader)} | {items} | {judged} | {ahead} |")
        out = left_out_words(left_out, paper_set(self.runs, left_out))
        return "\n".join(lines) + "\n\n" + _say("left_out", out)

    # ------------------------------------------------------------------ the own-run example
    def tlm_note(self) -> str:
        """Where the imported Cleanlab TLM scores come from: Cleanlab's open-source TLM, at the version
        its own environment pins (``results/tlm_anchor/requirements-tlm.lock``), run beside the
        package's scorers; the anchor's README, linked, says how."""
        anchor = self.root / "results" / "tlm_anchor"
        pins = (anchor / "requirements-tlm.lock").read_text() if (anchor / "requirements-tlm.lock").exists() else ""
        version = re.search(r"^trustworthy-llm==(\S+)", pins, re.M)
        package = f"`trustworthy-llm` {version[1]}" if version else "`trustworthy-llm`"
        readme = notebook_link(anchor / "README.md", self.out_dir.resolve().parent)
        return _say("tlm", package, readme)

    def own_run(self, report: Mapping[str, Any]) -> str:
        """The rows of an :func:`~construct_eval.evaluate_run` report with enough items, and a count
        of the others (their n is in the report's tables); where an imported TLM score is shown, where
        it came from (:meth:`tlm_note`)."""
        rows: Sequence[Mapping[str, Any]] = [r for r in report["rows"] if r.get("auroc") is not None]
        lines = ["| level | score | n (wrong) | AUROC [95% CI] | recall when reviewing 10% |", "|---|---|---|---|---|"]
        for r in (r for r in rows if not r.get("underpowered")):
            lines.append(f"| {r['level']} | {display_name(r['scorer'])} | {r['n']} ({r['positives']}) | "
                         f"{r['auroc']:.3f} [{r['auroc_low']:.3f}, {r['auroc_high']:.3f}] | {r['recall@10%']:.3f} |")  # fmt: skip
        weak = sum(bool(r.get("underpowered")) for r in rows)
        tlm = any(ScorerId.parse(r["scorer"]).family == "tlm" for r in rows if not r.get("underpowered"))
        rest = _say("own_run_rest", len(rows) - weak, len(rows), weak)
        return "\n".join(lines) + f"\n\n{rest}" + (f" {self.tlm_note()}" if tlm else "")
