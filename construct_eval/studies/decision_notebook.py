"""The tables notebook 06 (decisions) shows, each read from the runs' stored decision tables.

Notebook 06 asks which outputs can go straight through with a bounded share wrong. These functions
turn the runs' ``metrics/decision_*.csv`` (written by :mod:`construct_eval.studies.decisions`) and
``policy_split.csv`` into the Markdown the notebook shows, so its cells stay short; every number is
read from a table cell.

    from construct_eval.studies.decision_notebook import DecisionTables
    t = DecisionTables("results/runs", "results/notebooks/06_decisions")
    t.aurc_table("financial_ner-sample600-controlled30")
"""

from __future__ import annotations

from pathlib import Path

from construct_eval.csv_tables import read_rows
from construct_eval.decide.thresholds import quoted_need
from construct_eval.display.style import dataset_label
from construct_eval.reports.cells import Ledger
from construct_eval.scorer_labels import display_name
from construct_eval.stats.calibrators import calibrator_words
from construct_eval.studies.notebook_figures import notebook_link
from construct_eval.studies.notebook_words import say
from construct_eval.types import ScorerId


def _say(sentence, /, *args, **facts):
    """A sentence of ``templates/decision_notebook.md.j2``."""
    return say("decision_notebook", sentence, *args, **facts)


def num(x):
    return float(x) if x not in ("", None) else float("nan")


def pct(x):
    """A share as a percentage, as its table rounds it; a share above 0 that rounds to 0.0% reads
    "<0.1%", so "accepted some" never prints as nothing."""
    x = num(x)
    if x != x:
        return "-"
    return "<0.1%" if 0 < x < 0.0005 else f"{100 * round(x, 3):.1f}%"


def name(s):
    """A score in words, as notebooks 02 and 03 name it: every recorded judge was asked the forced
    way (a grammar allowing only the rating) unless its name says free."""
    try:
        return display_name(s, elicitation="grammar:rating-only")  # a combination lists what it combines
    except ValueError:
        return s


LABEL_LIMIT = 100
"""The longest row label a notebook table shows; a longer combination's name is shortened (:func:`row_label`)."""


def row_label(scorer, limit=LABEL_LIMIT):
    """A score as a table row names it: :func:`name`, or for a combination whose full name is longer
    than ``limit`` (a rank mean of four judge scores runs to 170 characters), the rank mean of its
    members each by its short name; the stored table it links keeps the full name."""
    full = name(scorer)
    sid = ScorerId.parse(scorer)
    if len(full) <= limit or not sid.is_combination:
        return full
    members = [display_name(m, short=True) for m in sid.members]
    head = display_name(scorer, short=True).split(" of ")[0]  # "rank mean", as a figure names it
    level = ", per field" if ", per field:" in full else ""
    return f"{head} of {', '.join(members[:-1])} and {members[-1]}{level}"


def short(scorer):
    """A score as a sentence names it: ``the checks``, ``the expected rating``, ``P(correct)``,
    ``the rank mean of the judge rating (forced) and the expected rating``."""
    sid = ScorerId.parse(scorer)
    if sid.family == "plausibility":
        return "the checks"
    if sid.is_combination:  # what it combines, each by its short name
        return "the rank mean of " + " and ".join(f"the {display_name(m, short=True)}" for m in sid.members)
    words = display_name(scorer, short=True)
    return words if words.startswith("P(") else f"the {words}"


def default_form(s):
    """A score in its default prompt order (the other orders are notebook 04's)."""
    return not ({"sec:o-s-r", "fields:reversed"} & set((ScorerId.parse(s).variant or "").split("|")))


def reader(run):
    """A run as the figures name it: 'financial NER (planted errors, 600 docs)'."""
    return "{} ({})".format(*dataset_label(run))


LEARNING_HEAD = "How many labels a calibration map takes"
"""The answer's bullet on calibration maps, said again as the learning-curve figure's answer."""


class DecisionTables:
    """The decision tables of the runs under ``runs_root``, with links relative to where the notebook
    is executed (``out_dir``'s parent)."""

    def __init__(self, runs_root: str | Path, out_dir: str | Path) -> None:
        self.runs = Path(runs_root)
        self.root = self.runs.resolve().parents[1]
        self.out_dir = Path(out_dir)

    def table(self, run, name):
        """A stored decision table of a run: deployable scores (no labels) in their default prompt order."""
        rows = read_rows(self.runs / run / "metrics" / f"decision_{name}.csv")
        return [r for r in rows if r.get("uses_labels") != "True" and default_form(r["scorer"])]

    def link(self, run, name):
        """A link to a stored table, relative to where the executed notebook lives (results/notebooks/)."""
        target = (self.runs / run / "metrics" / f"decision_{name}.md").resolve()
        words = {
            "aurc": "risk-coverage table",
            "ppi": "prediction-powered inference table",
            "learning": "learning-curve table",
        }.get(name, f"{name} table")
        return f"[{words}]({notebook_link(target, self.out_dir.resolve().parent)})"

    def learning_figure(self, run, width=800):
        """The run's learning curves per field (a figure, to ``display(*...)``) under a line naming
        the run and linking the same per document and the tables behind it, and the figure's answer
        under it: from how many labelled documents each drawn score's map beats the base rate
        (:meth:`labels_answer`'s calibration bullet)."""
        from IPython.display import Markdown

        from construct_eval.studies.notebook_figures import stored_figure

        figures = self.runs / run / "figures"
        here = self.out_dir.resolve().parent
        per_document = notebook_link(figures / "decision_learning_document.png", here)
        smooth = notebook_link(self.runs / run / "metrics" / "decision_smooth_ece.md", here)
        head = (
            f"**{reader(run)}**, fields ([the same per document]({per_document}); tables: "
            f"{self.link(run, 'learning')}, [smooth ECE]({smooth}))"
        )
        said = dict(self.labels_answer(run)).get(LEARNING_HEAD)
        answer = [Markdown(_say("learning_answer", LEARNING_HEAD, said))] if said else []
        return [Markdown(head), stored_figure(figures / "decision_learning_field.png", width=width), *answer]

    def answer(self, main_run):
        """The notebook's answer: one sentence and short bullets (what passes, what it passes, whether the
        bound held per field and per document, how many labels a threshold and a map take)."""
        table, link, ROOT = self.table, self.link, self.root

        def row(name, **where):
            return next(r for r in self.table(main_run, name) if all(r[k] == v for k, v in where.items()))

        def count(key):
            """A stored count of FINDINGS.counts.csv (written by construct_eval.studies.findings from the run's files)."""
            return next(r for r in read_rows(ROOT / "results" / "FINDINGS.counts.csv") if r["key"] == key)

        from construct_eval.studies.findings import real_error_checks  # the checks on a generator's errors, as FINDINGS

        checks = row("thresholds", level="field", scorer="plausibility@leaf", alpha="0.05")
        valid = row("validity", level="field", scorer="plausibility@leaf", alpha="0.05")
        doc_valid = row("validity", level="document", scorer="plausibility", alpha="0.1")
        base = next(r for r in table(main_run, "aurc") if r["level"] == "field")
        empty, filled_wrong = count("checks accept: empty outputs"), count("checks accept: filled fields wrong")
        earned = [r for r in table(main_run, "thresholds") if r["alpha"] == "0.05" and num(r["coverage"]) > 0]
        judges = [name(r["scorer"]) for r in earned if not r["scorer"].startswith("plausibility")]
        held = max(num(valid["violation_rate_run_as_population"]), num(valid["violation_rate"])) <= 0.1
        halves, population = num(doc_valid["violation_rate"]), num(doc_valid["violation_rate_run_as_population"])
        bullets = [
            _say("what_passes", pct(checks["coverage"]), pct(checks["risk_bound"]), checks["n_documents"],
                 pct(base["error_rate"]), base["n"]),
            _say("what_it_passes", f"{100 * float(empty['share']):.0f}%", empty["count"], filled_wrong["of"],
                 f"{100 * float(filled_wrong['share']):.1f}%", real_error_checks(Ledger(ROOT), flat=False)),
            _say("bound_per_field", pct(valid["violation_rate_run_as_population"]),
                 pct(valid["naive_violation_rate_run_as_population"]), pct(valid["violation_rate"]),
                 pct(valid["naive_violation_rate"]), f"{link(main_run, 'thresholds')}, {link(main_run, 'validity')}"),
            _say("bound_per_document", (halves > 0.1) == (population > 0.1), pct(population), pct(halves),
                 halves > 0.1 >= population),
            *(_say("bullet", head, text) for head, text in self.labels_answer(main_run)),
        ]  # fmt: skip
        return _say("answer_head", judges, held, reader(main_run)) + "\n\n" + "\n".join(bullets)

    def separated_from(self, run, scorer, level="field"):
        """The fewest labelled documents at which a calibration map of ``scorer`` beats the base rate
        of the same documents (the 97.5th percentile of its held-out Brier over the draws below the base
        rate's 2.5th),
        with that row and the base rate's; None where no number of documents does."""
        rows = [r for r in self.table(run, "learning") if r["level"] == level and r["scorer"] == scorer]
        for m in sorted({int(r["labelled_documents"]) for r in rows}):
            at = [r for r in rows if int(r["labelled_documents"]) == m]
            base = next(r for r in at if r["method"] == "base rate")
            maps = [r for r in at if r["method"] != "base rate" and num(r["brier_high"]) < num(base["brier_low"])]
            if maps:
                return m, min(maps, key=lambda r: num(r["brier"])), base
        return None

    def labels_answer(self, run):
        """How many labelled documents a threshold and a calibration map take on ``run``, as (head,
        text) bullets: the checks' threshold (the run, and the fitting half of the policy split), what
        the judge's forced rating per field would need (the test's own replay, ``documents_needed``),
        and from how many documents each drawn score's calibration map beats the base rate (the middle
        95% of its held-out Brier scores over the draws below the base rate's)."""
        thresholds = {(r["level"], r["scorer"], r["alpha"]): r for r in self.table(run, "thresholds")}
        checks = thresholds[("field", "plausibility@leaf", "0.05")]
        split = next(
            r for r in read_rows(self.runs / run / "metrics" / "policy_split.csv") if r["scorer"] == "plausibility@leaf"
        )
        realised = pct(split["realised"]) if split["realised"] else ""
        threshold = _say("threshold_labels", checks["n_documents"], split["fit_documents"], realised,
                         self.link(run, "thresholds"))  # fmt: skip
        bullets = [("How many labels a threshold takes", threshold)]
        words = []
        for alpha in ("0.1", "0.05"):
            r = thresholds.get(("field", "judge-field", alpha))
            if r is None or num(r["coverage"]) > 0:
                continue
            if r["more_labels"]:
                helps = r["more_labels"] == "would help"
                need = quoted_need(num(r["documents_needed"])) if helps else None
                words.append(_say("forced_need", pct(alpha).replace(".0%", "%"), r["more_labels"], need,
                                  pct(r["coverage_if_enough"])))  # fmt: skip
        if words:
            bullets.append(("The judge's forced rating", _say("forced_none", "; ".join(words))))
        from construct_eval.decide.stored import learning_scorers

        learning = self.table(run, "learning")
        beat, never = [], []
        for scorer in learning_scorers([r for r in learning if r["level"] == "field"]):
            found = self.separated_from(run, scorer)
            if found is None:
                never.append(short(scorer))
            else:
                m, best, base = found
                beat.append(_say("map_beats", m, short(scorer), f"{num(best['brier']):.3f}",
                                 calibrator_words(best["method"]), f"{num(base['brier']):.3f}", int(best["repeats"])))  # fmt: skip
        # each score's own largest draw: a score asked on a part of the run (P(correct)) stops sooner
        most: dict[str, int] = {}
        for r in learning:
            if r["level"] == "field":
                key = short(r["scorer"])
                most[key] = max(most.get(key, 0), int(r["labelled_documents"]))
        groups: dict[int, list[str]] = {}
        for scorer in never:
            groups.setdefault(most[scorer], []).append(scorer)
        nothing = []
        for top, scorers in sorted(groups.items(), key=lambda kv: -kv[0]):
            nothing.append(_say("map_never", scorers, top))
        maps = beat + nothing
        if maps:
            bullets.append((LEARNING_HEAD, _say("maps", maps, self.link(run, "learning"))))
        return bullets

    def validity_table(self, run, level):
        """The scores and alphas at which the bounded rule accepted anything, beside the naive rule."""
        rows = [r for r in self.table(run, "validity") if r["level"] == level]
        best, seen = {}, set()
        for r in rows:  # the rows where the bounded rule accepted anything; a flat schema's top-level twin once
            numbers = tuple(r[k] for k in ("alpha", "violation_rate", "mean_coverage", "naive_violation_rate"))
            if num(r["mean_coverage"]) > 0 and (r["scorer"].split("@")[0], numbers) not in seen:
                seen.add((r["scorer"].split("@")[0], numbers))
                best.setdefault(r["scorer"], []).append(r)
        lines = [
            "| score | alpha | bounded rule: splits over alpha | run as population | mean coverage "
            "| naive rule: splits over alpha | naive coverage |",
            "|---|---|---|---|---|---|---|",
        ]
        for s, rs in sorted(best.items(), key=lambda kv: -max(num(r["mean_coverage"]) for r in kv[1])):
            for r in rs:
                lines.append(
                    f"| {name(s)} | {pct(r['alpha'])} | {pct(r['violation_rate'])} | "
                    f"{pct(r['violation_rate_run_as_population'])} | {pct(r['mean_coverage'])} | "
                    f"{pct(r['naive_violation_rate'])} | {pct(r['naive_mean_coverage'])} |"
                )
        return "\n".join(lines)

    def aurc_table(self, run):
        """AURC per score, grouped by level and by n (each group its own random baseline), ordered by AURC minus random."""
        lines = ["| score | AURC [95% CI] | minus random | oracle | risk at 80% coverage |", "|---|---|---|---|---|"]
        seen, group = set(), None
        rows = sorted(
            self.table(run, "aurc"), key=lambda r: (r["level"], -int(r["n"]), num(r["aurc"]) - num(r["aurc_random"]))
        )
        for r in rows:
            twin = (r["level"], r["scorer"].split("@")[0], r["n"], r["aurc"], r["risk_at_80%"])
            if twin in seen:  # a flat schema: the top-level row is the leaf row again
                continue
            seen.add(twin)
            if group != (r["level"], r["n"]):
                group = (r["level"], r["n"])
                lines.append(f"| **{r['level']}s, on {int(r['n']):,}** (random {num(r['aurc_random']):.3f}) | | | | |")
            lines.append(
                f"| {row_label(r['scorer'])} | {num(r['aurc']):.3f} [{num(r['aurc_low']):.3f}, {num(r['aurc_high']):.3f}] "
                f"| {num(r['aurc']) - num(r['aurc_random']):+.3f} | {num(r['aurc_oracle']):.3f} | {pct(r['risk_at_80%'])} |"
            )
        return "\n".join(lines)

    def ppi_table(self, run):
        """The narrowest PPI++ interval at each n beside the labels-only one; the label saving only where PPI++ coverage holds."""
        rows = [r for r in self.table(run, "ppi") if r["n_labelled"] in ("50", "100", "200")]
        best = {}
        for r in rows:
            key = (r["level"], r["n_labelled"])
            if key not in best or num(r["ppi_width"]) < num(best[key]["ppi_width"]):
                best[key] = r

        def covered(coverage, draws):
            """The coverage, marked where it falls more than two standard errors (of 95% over the draws) below 95%."""
            low = num(coverage) < 0.95 - 2 * (0.95 * 0.05 / draws) ** 0.5
            return pct(coverage) + (", below 95%" if low else "")

        def saving(r):
            """The effective labels, or why the saving is not established (PPI++ below its 95% target)."""
            if num(r["ppi_coverage"]) < 0.95 - 2 * (0.95 * 0.05 / int(r["draws"])) ** 0.5:
                return f"not established ({num(r['effective_labels']):.0f} if coverage held)"
            return f"{num(r['effective_labels']):.0f}"

        lines = [
            "| level | labelled documents | narrowest score | PPI++ width (coverage) | labels only: width (coverage) "
            "| effective labels |",
            "|---|---|---|---|---|---|",
        ]
        for (level, n), r in sorted(best.items(), key=lambda kv: (kv[0][0], int(kv[0][1]))):
            lines.append(
                f"| {level} | {n} | {name(r['scorer'])} | {num(r['ppi_width']):.3f} ({covered(r['ppi_coverage'], int(r['draws']))}) | "
                f"{num(r['classical_width']):.3f} ({covered(r['classical_coverage'], int(r['draws']))}) | {saving(r)} |"
            )
        # the labels-only interval does not depend on the score: its marks show how often the mark falls by chance
        classical = {(r["level"], r["n_labelled"]): r for r in self.table(run, "ppi")}
        marked = [r for r in classical.values() if covered(r["classical_coverage"], int(r["draws"])).endswith("95%")]
        if marked:
            draws = int(next(iter(classical.values()))["draws"])
            lines.append("\n" + _say("marked_by_chance", len(marked), len(classical), draws))
        return "\n".join(lines)

    def split_table(self, run):
        """The trust policy fitted on half of the documents and used on the other half, per deployable score."""
        lines = [
            "| score | fitting documents | threshold | fields accepted of the other half | accepted fields wrong [95% CI] | within alpha |",
            "|---|---|---|---|---|---|",
        ]
        rows = read_rows(self.runs / run / "metrics" / "policy_split.csv")
        for r in rows:
            wrong = (
                f"{pct(r['realised'])} [{pct(r['realised_low'])}, {pct(r['realised_high'])}]"
                if r["realised"]
                else "none accepted"
            )
            threshold = f"{num(r['threshold']):.3g}" if r["threshold"] else "none meets alpha"
            within = {"True": "yes", "False": "no"}.get(r["within_alpha"], "")
            lines.append(
                f"| {name(r['scorer'])} | {int(r['fit_documents']):,} | {threshold} | "
                f"{pct(r['accepted_share'])} of {int(r['new_items']):,} | {wrong} | {within} |"
            )
        return "\n".join(lines)
