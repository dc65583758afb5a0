#!/usr/bin/env bash
# make reproduce: every stored table, results/FINDINGS.md, the README's findings block, the paper
# figures and tables and the executed notebooks 02-07 remade from the stored run files, offline,
# with no model call; each step prints its time. It ends by holding what it made to what is
# committed (HEAD): tables and findings with diff_tables.py's tolerance rule (issue 58: fitted
# numbers within 1e-6, Beta 1e-4, printed cells identical, findings byte for byte), figures by
# their manifest (the same files, made from inputs with the same digests), and each executed
# notebook's figures against the files they show (notebook_figures.py). Exit 0 when all hold.
#
#   bash construct_eval/studies/reproduce.sh            # remake everything, then check
#   bash construct_eval/studies/reproduce.sh --check    # check the working tree against HEAD only
#
# Notebook 01 (the quickstart) calls the embedded model and is left out (`make notebooks` runs it).
# A run still being judged changes its own files: its tables then differ from the committed ones,
# as they should; commit the run files and its tables together.
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-.venv/bin/python}
CE="$PY -m construct_eval.cli"
R=results/runs
S=construct_eval.studies  # the scripts, run as python -m $S.NAME (the working folder first on the path)
CHECK_ONLY=0
case ${1:-} in
  --check) CHECK_ONLY=1 ;;
  -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "unknown argument $1 (--check or --help)" >&2; exit 2 ;;
esac
export PYTHONWARNINGS=ignore::UserWarning MPLBACKEND=Agg

START=$SECONDS
step() {  # step NAME COMMAND...: run it, print its time; stop at the first failure
  local name=$1 t0=$SECONDS
  shift
  printf '== %-58s' "$name"
  if "$@" > /tmp/reproduce-step.log 2>&1; then
    printf ' %5d s\n' $((SECONDS - t0))
  else
    printf ' FAILED after %d s:\n' $((SECONDS - t0))
    tail -20 /tmp/reproduce-step.log
    exit 2
  fi
}

natural_tables() {  # part E of natural_study.sh for every judged natural run: its paired,
  # paper-comparison and decision tables (analyse_all.sh makes its evaluate and calibrate tables)
  local run
  for run in $R/natural-*/; do
    [ -s "$run/judgments.jsonl" ] || [ -s "$run/scores.jsonl" ] || continue
    [ -d "$run/metrics" ] || continue
    $CE paired --run "$run" --reference judge-doc --level document > /dev/null 2>&1 || true
    $CE paired --run "$run" --reference judge-field --level field > /dev/null 2>&1 || true
    if ls "$run"metrics/paired_field_*by_output_kind* > /dev/null 2>&1; then
      $CE paired --run "$run" --reference judge-field --level field --by-output-kind > /dev/null || return 1
    fi
    if [ -e "$run/metrics/paper_comparison.csv" ]; then $CE paper-comparison --run "$run" > /dev/null || return 1; fi
  done
  # the positive control and CONSTRUCT's parts: the natural run's CONSTRUCT and its other judges'
  local natural=$R/natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package others=()
  for run in "$natural"-judge-*/; do [ -s "$run/construct.jsonl" ] && others+=("${run%/}"); done
  "$PY" -m $S.competence "$natural" ${others[@]:+--judge-runs "${others[@]}"} > /dev/null || return 1
  "$PY" -m construct_eval.display.competence_plot "$natural" > /dev/null || return 1
}

decision_tables() {  # decisions.py for every run that has decision tables (>= 100 labelled documents)
  local run
  for run in $R/*/; do
    [ -e "$run/metrics/decision_thresholds.csv" ] && { "$PY" -m $S.decisions "$run" > /dev/null || return 1; }
  done
  return 0
}

reports() {  # the study reports written from the tables, and the status table of results/runs/README.md
  "$PY" -m $S.policy_split > /dev/null &&
    "$PY" -m $S.natural_judging > $R/natural_judging.md &&
    "$PY" -m $S.construct_settings_report > /dev/null &&
    "$PY" -m $S.natural_error_patterns > $R/natural_error_patterns.md &&
    "$PY" -m $S.natural_pilots_report > $R/natural_pilots.md &&
    "$PY" - << 'PYEOF'
import subprocess, sys
from pathlib import Path

table = subprocess.run([sys.executable, "-m", "construct_eval.studies.status"], capture_output=True, text=True, check=True).stdout
lines = [line for line in table.splitlines() if line.startswith("|")]
readme = Path("results/runs/README.md")
text = readme.read_text().splitlines()
start = next(i for i, line in enumerate(text) if line.startswith("| run | outputs | done |"))
end = start
while end < len(text) and text[end].startswith("|"):
    end += 1
readme.write_text("\n".join(text[:start] + lines + text[end:]) + "\n")
PYEOF
}

notebooks() {
  local nb
  for nb in 02_error_detection 03_calibration 04_positional_bias 05_paper_figures 06_decisions 07_natural_errors; do
    rm -rf results/notebooks/$nb
    # the kernel draws inline: MPLBACKEND=Agg (set above for the figure commands) would make
    # every plt.show() in a notebook draw nothing
    # each notebook's own out_dir is results/notebooks/$nb: no parameter, so no cell repeating it
    env -u MPLBACKEND "$PY" -m papermill -k python3 --log-level WARNING notebooks/$nb.ipynb \
      results/notebooks/$nb.ipynb || return 1
  done
}

if [ $CHECK_ONLY = 0 ]; then
  echo "remaking every table, the findings, the paper figures and notebooks 02-07 (no model call); load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
  step "tables of every run (analyse_all.sh)" bash construct_eval/studies/analyse_all.sh
  step "the natural runs' paired and paper-comparison tables" natural_tables
  step "decision tables (decisions.py)" decision_tables
  step "study reports and the runs' status table" reports
  step "FINDINGS.md and the README's findings (construct_eval.studies.findings)" "$PY" -m $S.findings
  step "paper figures and tables (results/figures/make.sh)" bash results/figures/make.sh
  step "notebooks 02-07 (papermill)" notebooks
  echo "== remade in $((SECONDS - START)) s"
fi

# the check: what was made against what is committed
BEFORE=$(mktemp -d)
trap 'rm -rf "$BEFORE"' EXIT
git archive HEAD results README.md | tar -x -C "$BEFORE"
t0=$SECONDS
"$PY" -m $S.diff_tables "$BEFORE" . > /tmp/reproduce-tables.txt
tables=$?
"$PY" - "$BEFORE/results/figures/manifest.json" results/figures/manifest.json << 'PYEOF'
import json, sys

before, after = (json.load(open(p))["files"] for p in sys.argv[1:3])
only = sorted(set(before) ^ set(after))
moved = sorted(name for name in set(before) & set(after) if before[name]["inputs"] != after[name]["inputs"])
redrawn = sorted(name for name in set(before) & set(after) if before[name]["sha256"] != after[name]["sha256"])
print(f"figures: {len(after)} made, {len(only)} on one side only{': ' + ', '.join(only) if only else ''}; "
      f"{len(moved)} read inputs with other digests; {len(redrawn)} with other bytes")
sys.exit(1 if only else 0)
PYEOF
figures=$?
"$PY" -m $S.notebook_figures results/notebooks/0*.ipynb  # each notebook shows its figures as they are now
shown=$?
if [ $tables = 0 ]; then tail -3 /tmp/reproduce-tables.txt; else head -30 /tmp/reproduce-tables.txt; fi
changed=$(git status --porcelain -- results README.md | wc -l)
echo "== check in $((SECONDS - t0)) s: tables and findings $([ $tables = 0 ] && echo hold || echo DIFFER, see /tmp/reproduce-tables.txt); figures $([ $figures = 0 ] && echo hold || echo DIFFER); notebooks' figures $([ $shown = 0 ] && echo current || echo STALE); $changed files under results/ or README.md differ from HEAD in bytes (git status)"
echo "== total $((SECONDS - START)) s"
[ $tables = 0 ] && [ $figures = 0 ] && [ $shown = 0 ]
