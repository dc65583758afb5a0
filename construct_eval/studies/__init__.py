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
- :mod:`.diff_tables`: the stored-numbers guard (two analysed trees compared cell by cell).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository checkout these modules live in."""
RUNS = ROOT / "results" / "runs"
"""The recorded run folders and the reports beside them."""
