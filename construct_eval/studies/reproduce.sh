#!/usr/bin/env bash
# make reproduce: every stored table, results/FINDINGS.md, the README's findings block, the paper
# figures and tables and the executed notebooks 02-07 remade from the stored run files, offline,
# with no model call. It ends by holding what it made to what is committed (HEAD): tables and
# findings with diff_tables.py's tolerance rule (issue 58: fitted numbers within 1e-6, Beta 1e-4,
# printed cells identical, findings byte for byte), figures by their manifest (the same files,
# made from inputs with the same digests), and each executed notebook's figures against the files
# they show (notebook_figures.py). Exit 0 when all hold.
#
#   bash construct_eval/studies/reproduce.sh            # remake everything, then check
#   bash construct_eval/studies/reproduce.sh --check    # check the working tree against HEAD only
#
# The steps that do not read each other's files run side by side (issue 79), each with its own log
# (the folder is printed first), its time printed as it ends and all of them in a table at the end:
#
#   labels                      analyse_all.sh labels: the run files every later step reads
#   then, side by side:
#     tables                    analyse_all.sh tables: evaluate, calibrate, bias, paired, two reports
#     natural, then reports     the natural runs' paired, paper-comparison and competence tables;
#                               then the study reports (which read paper_comparison.csv)
#     decisions                 decisions.py on every run with decision tables (reads the run files only)
#   figures                     once tables and natural are done (it reads their tables, no decision table)
#   then, side by side, once every table and figure is made:
#     findings                  FINDINGS.md and the README's block (read every table and the figures' CSVs)
#     notebooks-a, notebooks-b  notebooks 02-07 in two lanes (each reads the figures and tables only)
#
# A step that fails fails the run: its lane stops, the steps beside it finish, the steps after it do
# not start, the end of its log is printed, and the exit code is 2. BLAS runs on one thread in every
# step: the steps share the cores, and a BLAS thread pool per process spins on them (100 small
# Platt fits: 1.54 CPU s on two BLAS threads, 0.05 on one, the same numbers).
#
# Notebook 01 (the quickstart) calls the embedded model and is left out (`make notebooks` runs it).
# A run still being judged changes its own files: its tables then differ from the committed ones,
# as they should; commit the run files and its tables together.
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-.venv/bin/python}
CE="$PY -m construct_eval.cli"
R=results/runs
SETTINGS_FILLED=paired_field_construct_top_by_output_kind  # construct_settings_report.FILLED
S=construct_eval.studies  # the scripts, run as python -m $S.NAME (the working folder first on the path)
CHECK_ONLY=0
case ${1:-} in
  --check) CHECK_ONLY=1 ;;
  -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "unknown argument $1 (--check or --help)" >&2; exit 2 ;;
esac
export PYTHONWARNINGS=ignore::UserWarning MPLBACKEND=Agg

# BLAS on one thread per process (see above); a caller's own setting is kept
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/reproduce.XXXXXX")  # one log per step, kept after the run
TIMES=$LOGS/times.tsv  # step, started (s from the start), took (s), CPU (s), exit code, what: one line per step
load() { cut -d' ' -f1-3 /proc/loadavg 2> /dev/null || echo "?"; }  # the load average, where the system says it

START=$SECONDS
step() {  # step NAME WHAT COMMAND...: run it, its output in $LOGS/NAME.log; print and record its time; its exit code
  local name=$1 what=$2 t0=$SECONDS code cpu
  shift 2
  times > "$LOGS/$name.cpu"  # the CPU of this shell's finished children, before and after: the step's own
  "$@" > "$LOGS/$name.log" 2>&1
  code=$?
  times >> "$LOGS/$name.cpu"
  cpu=$(awk '{ for (i = 1; i <= 2; i++) { split($i, p, "m"); s[NR] += p[1] * 60 + p[2] } }
             END { printf "%.0f", s[4] - s[2] }' "$LOGS/$name.cpu")
  printf '%s\t%d\t%d\t%s\t%d\t%s\n' "$name" $((t0 - START)) $((SECONDS - t0)) "$cpu" $code "$what" >> "$TIMES"
  if [ $code = 0 ]; then
    printf '== %-12s %5d s, CPU %5s s  (from %4d s) %s\n' "$name" $((SECONDS - t0)) "$cpu" $((t0 - START)) "$what"
  else
    printf '== %-12s FAILED after %d s (exit %d): %s; the end of %s:\n' "$name" $((SECONDS - t0)) $code "$what" "$LOGS/$name.log"
    tail -20 "$LOGS/$name.log" | sed 's/^/   | /'
  fi
  return $code
}

FAILED=0
LANES=""
lane() {  # lane COMMAND...: run it in the background in its own process group (so a stop ends it and all it started); $! is its pid
  set -m
  "$@" &
  set +m
  LANES="$LANES $!"
}
collect() {  # collect PID...: wait for each lane; FAILED=1 if one failed
  local pid
  for pid in "$@"; do wait "$pid" || FAILED=1; done
}
stop_lanes() {
  local pid
  for pid in $LANES; do kill -TERM -- -"$pid" 2> /dev/null; done
}
trap 'stop_lanes; echo "== interrupted after $((SECONDS - START)) s (logs in $LOGS)"; exit 130' INT TERM

step_table() {  # every step's time and CPU, in the order they started (steps side by side overlap)
  echo "== step times (s; steps side by side overlap; CPU: the step's processes, user + system; logs in $LOGS):"
  sort -t $'\t' -k2,2n "$TIMES" | awk -F '\t' '{ printf "   %-12s from %5d  took %5d  CPU %5d  %s%s\n", $1, $2, $3, $4, $6, ($5 == 0 ? "" : "  FAILED (exit " $5 ")"); cpu += $4 }
    END { printf "   %-12s %5d CPU s in all\n", "", cpu }'
}

stop_if_failed() {  # after a wave of lanes: a failure stops the run before the next wave
  if [ $FAILED != 0 ]; then
    step_table
    echo "== stopped after $((SECONDS - START)) s: a step failed (its log: $LOGS)"
    exit 2
  fi
}

natural_tables() {  # part E of natural_study.sh for every judged natural run: its paired,
  # paper-comparison and decision tables (analyse_all.sh makes its evaluate and calibrate tables)
  local run
  for run in $R/natural-*/ $R/*-construct/; do  # a CONSTRUCT setting's own copy of a run too
    [ -s "$run/judgments.jsonl" ] || [ -s "$run/scores.jsonl" ] || continue
    [ -d "$run/metrics" ] || continue
    if [[ $run == $R/natural-* ]]; then
      $CE paired --run "$run" --reference judge-doc --level document > /dev/null 2>&1 || true
      $CE paired --run "$run" --reference judge-field --level field > /dev/null 2>&1 || true
      if ls "$run"metrics/paired_field_judge-field*by_output_kind* > /dev/null 2>&1; then
        $CE paired --run "$run" --reference judge-field --level field --by-output-kind > /dev/null || return 1
      fi
    fi
    if [ -e "$run/metrics/paper_comparison.csv" ]; then $CE paper-comparison --run "$run" > /dev/null || return 1; fi
    if [ -e "$run/metrics/$SETTINGS_FILLED.csv" ]; then  # the settings table's reading within filled fields
      $CE paired --run "$run" --reference construct@top --level field --by-output-kind --scorers token_logprob@top \
        > /dev/null || return 1
    fi
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
    [ -e "$run/metrics/decision_thresholds.csv" ] && { "$PY" -m $S.decisions "$run" || return 1; }  # its log: each scorer, each run's time
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

natural_then_reports() {  # the reports read the natural runs' paper_comparison.csv
  step natural "the natural runs' paired, paper-comparison and competence tables" natural_tables &&
    step reports "study reports and the runs' status table" reports
}

notebooks() {  # notebooks NAME...: execute each in turn (two lanes run side by side)
  local nb
  for nb in "$@"; do
    rm -rf results/notebooks/$nb
    # the kernel draws inline: MPLBACKEND=Agg (set above for the figure commands) would make
    # every plt.show() in a notebook draw nothing
    # each notebook's own out_dir is results/notebooks/$nb: no parameter, so no cell repeating it
    env -u MPLBACKEND "$PY" -m papermill -k python3 --log-level WARNING notebooks/$nb.ipynb \
      results/notebooks/$nb.ipynb || return 1
  done
}

if [ $CHECK_ONLY = 0 ]; then
  echo "remaking every table, the findings, the paper figures and notebooks 02-07 (no model call); load: $(load) on $(nproc) cores; logs in $LOGS"
  # every step in a lane of its own or shared, so its CPU is counted in that lane's shell alone
  lane step labels "label every run, combine the judge study's scores (analyse_all.sh labels)" \
    bash construct_eval/studies/analyse_all.sh labels
  collect $!
  stop_if_failed
  lane step tables "tables of every run (analyse_all.sh tables)" bash construct_eval/studies/analyse_all.sh tables
  tables_lane=$!
  lane natural_then_reports
  natural_lane=$!
  lane step decisions "decision tables (decisions.py)" decision_tables
  decisions_lane=$!
  collect $tables_lane $natural_lane
  if [ $FAILED = 0 ]; then  # the figures read the tables and the natural tables, no decision table
    lane step figures "paper figures and tables (results/figures/make.sh)" bash results/figures/make.sh
    collect $!
  fi
  collect $decisions_lane
  stop_if_failed
  lane step findings "FINDINGS.md and the README's findings (construct_eval.studies.findings)" "$PY" -m $S.findings
  findings_lane=$!
  # two lanes of about equal time (03 and 05 take longest)
  lane step notebooks-a "notebooks 02, 05, 06 (papermill)" notebooks 02_error_detection 05_paper_figures 06_decisions
  notebooks_a=$!
  lane step notebooks-b "notebooks 03, 04, 07 (papermill)" notebooks 03_calibration 04_positional_bias 07_natural_errors
  notebooks_b=$!
  collect $findings_lane $notebooks_a $notebooks_b
  stop_if_failed
  step_table
  echo "== remade in $((SECONDS - START)) s; load: $(load)"
fi

# the check: what was made against what is committed
BEFORE=$(mktemp -d)
trap 'rm -rf "$BEFORE"' EXIT
git archive HEAD results README.md | tar -x -C "$BEFORE"
t0=$SECONDS
"$PY" -m $S.diff_tables "$BEFORE" . > "$LOGS/check-tables.txt"
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
if [ $tables = 0 ]; then tail -3 "$LOGS/check-tables.txt"; else head -30 "$LOGS/check-tables.txt"; fi
changed=$(git status --porcelain -- results README.md | wc -l)
echo "== check in $((SECONDS - t0)) s: tables and findings $([ $tables = 0 ] && echo hold || echo DIFFER, see $LOGS/check-tables.txt); figures $([ $figures = 0 ] && echo hold || echo DIFFER); notebooks' figures $([ $shown = 0 ] && echo current || echo STALE); $changed files under results/ or README.md differ from HEAD in bytes (git status)"
echo "== total $((SECONDS - START)) s"
[ $tables = 0 ] && [ $figures = 0 ] && [ $shown = 0 ]
