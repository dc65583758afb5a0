"""The project's own studies: the scripts that made and read the recorded runs under ``results/``.

They sit on top of the import layers (they may import every other part of the package; nothing
in the package imports them) and work on a checkout of the repository, whose ``results/`` they
read and write (:data:`ROOT`, :data:`RUNS`). Each Python module has a ``main()`` and runs as
``python -m construct_eval.studies.<name>``; the shell scripts beside them (the model studies,
``analyse_all.sh``, ``reproduce.sh``, ``diff_tables.sh``) call them that way. The catalogue of runs
and how each was made is ``results/runs/README.md``.

- :mod:`.findings`: ``results/FINDINGS.md`` and the README's findings block, from named table cells;
- :mod:`.status`: the status table of ``results/runs/README.md``;
- :mod:`.decisions`, :mod:`.policy_split`: the decision and trust-policy tables of the runs;
- :mod:`.null_split`, :mod:`.judge_study_report`, :mod:`.natural_judging`,
  :mod:`.natural_error_patterns`, :mod:`.natural_pilots_report`, :mod:`.table_fields`: the reports
  beside the runs (``results/runs/*.md``);
- :mod:`.balanced_order`, :mod:`.contact_rule`: the natural-error study's document order and its
  label-free rule;
- :mod:`.diff_tables`: the stored-numbers guard (two analysed trees compared cell by cell);
- :mod:`.error_detection_notebook`, :mod:`.natural_notebook`, :mod:`.decision_notebook`: helpers of
  notebooks 02, 07 and 06.

The notebooks' helpers (reading named table cells, the reader's names for scores, orders and
datasets, the runs on disk) are importable from here, ``from construct_eval.studies import
Ledger, display_name``: they serve the study's notebooks, not a user's pipeline, so they are not
among ``construct_eval``'s public names.
"""

from __future__ import annotations

from pathlib import Path

from construct_eval.lazy import lazy_names

ROOT = Path(__file__).resolve().parents[2]
"""The repository checkout these modules live in."""
RUNS = ROOT / "results" / "runs"
"""The recorded run folders and the reports beside them."""


def is_copy(run: Path) -> bool:
    """A run folder whose outputs are another run's, copied by ``construct-eval subset`` for another
    judge (``subset_of`` in its run.json): reports about generators and their errors leave it out."""
    import json

    meta = Path(run) / "run.json"
    return meta.is_file() and "subset_of" in json.loads(meta.read_text())


NOTEBOOK_HELPERS = {
    "Ledger": "construct_eval.reports.cells",
    "ScorerId": "construct_eval.types",
    "calibrator_words": "construct_eval.stats.calibrators",
    "dataset_label": "construct_eval.display.style",
    "paper_dataset_label": "construct_eval.display.style",
    "answered_figure": "construct_eval.studies.notebook_figures",
    "describe_values": "construct_eval.stats.calibration",
    "display_name": "construct_eval.scorer_labels",
    "elicitation_label": "construct_eval.scorer_labels",
    "elicitation_run": "construct_eval.reports.run_analyses",
    "find_runs": "construct_eval.reports.collect",
    "in_default_order": "construct_eval.scorer_labels",
    "labelled_items": "construct_eval.decide.policy",
    "left_out_words": "construct_eval.paper.figure_set",
    "only_documents": "construct_eval.decide.policy",
    "paper_set": "construct_eval.paper.figure_set",
    "read_left_out": "construct_eval.paper.figure_set",
    "run_outputs": "construct_eval.decide.policy",
    "stored_figure": "construct_eval.studies.notebook_figures",
    "variant_label": "construct_eval.scorer_labels",
}
"""What the notebooks import from here, and where each lives (loaded on first use)."""


__getattr__, __dir__ = lazy_names(__name__, NOTEBOOK_HELPERS)
