#!/usr/bin/env bash
# CONSTRUCT beyond its first setting (issue 76): the same method (the authors' TLM 0.0.3 at the
# medium preset, 5 calls an output) with a second and a third judge size on the natural run's
# notices, and with the 1.5B judge on a second dataset of errors a generator really made.
#
#   J05   Qwen2.5-Coder-0.5B judges the 200 notices CONSTRUCT (1.5B) was asked on, in the same
#         balanced order, in its own run folder (the 1.5B generator's outputs, labels, log-probs
#         and samples copied from the natural run by `construct-eval subset`: a run folder holds
#         one judge's CONSTRUCT, so the 1.5B's stays where it is)
#   J135  SmolLM2-135M on the first PILOT notices of that order, its own run folder likewise: a
#         pilot (if its replies are unreadable, their unreadable share is the result)
#   FIN   the 1.5B judge on the financial-entity sentences the 0.5B generator extracted, in the
#         run's order, in its own run folder (financial_ner-sample200-construct: a copy of
#         financial_ner-sample200 with every file, its judge and log-probs included, by `subset`),
#         so the run the paper set draws stays as it is until CONSTRUCT there is complete
#
# Each part runs LIMIT documents of its order (0: all), one document's five calls back to back on
# the one-slot server (they share the document's prompt prefix), so a stop loses at most one
# document's calls, and a rerun skips every finished call. Model time, so it runs in the
# background from a git worktree pinned to a commit, writing into the main checkout:
#
#   git worktree add --detach ../pin-settings <commit>
#   PROJECT=/work/main PARTS=J05 LIMIT=10 bash ../pin-settings/construct_eval/studies/construct_settings.sh \
#     > /tmp/construct_settings.log 2>&1 &
#
# Tables afterwards (no model call): PARTS=E, which labels, scores the log-probs and runs evaluate
# and paper-comparison (and the paired table within filled fields) on each of the three run folders that
# has CONSTRUCT rows.
set -uo pipefail
source "$(dirname "$0")/study_env.sh"  # CODE, PROJECT, PY, DATA, PORT, CE, step, require_pinned_code
R=${RUNS:-$PROJECT/results/runs}
NATURAL=$R/natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package
FINANCIAL=$R/financial_ner-sample200
FINANCIAL_CONSTRUCT=$FINANCIAL-construct
PARTS=${PARTS:-J05,J135,FIN}
LIMIT=${LIMIT:-0}
PILOT=${PILOT:-10}
NOTICES=${NOTICES:-200}        # the balanced order's first NOTICES notices: those CONSTRUCT (1.5B) was asked on
PRESET=${PRESET:-medium}
LOGS=${LOG_DIR:-/tmp}
want() { [[ ",$PARTS," == *",$1,"* ]]; }
judge_run() { echo "$NATURAL-judge-$1"; }  # the run folder of CONSTRUCT with judge MODEL on the natural notices

step "code $(git -C "$CODE" rev-parse --short HEAD) from $CODE; runs in $R; parts $PARTS; limit $LIMIT"
require_pinned_code || exit 1

SERVER_PID=
URL=http://127.0.0.1:$PORT/v1
serving() { curl -sf "$URL/models" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["data"][0]["id"])' 2>/dev/null; }
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  step "stop the server (process group $SERVER_PID)"
  kill -- -"$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=
  while curl -sf "$URL/models" > /dev/null; do sleep 1; done
}
trap stop_server EXIT
serve() {  # MODEL: its server on $PORT, started here unless it answers already
  local model=$1 now
  now=$(serving)
  [ "$now" = "$model" ] && return 0
  stop_server
  now=$(serving)
  if [ -n "$now" ]; then echo "port $PORT answers with $now, a server this script did not start: stop it first"; exit 1; fi
  step "serve $model on port $PORT (log $LOGS/construct-settings-serve-$model.log)"
  setsid $CE serve --model "$model" --port "$PORT" > "$LOGS/construct-settings-serve-$model.log" 2>&1 &
  SERVER_PID=$!
  until [ "$(serving)" = "$model" ]; do
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "the $model server stopped: see $LOGS/construct-settings-serve-$model.log"; exit 1; }
    sleep 5
  done
}
# A judge-swap run: the natural run's first N notices of the balanced order, with what the
# generator made of them (records, outputs, labels, provenance, samples), and no judge's rows.
judge_swap_run() {  # MODEL N
  local run n=$2 ids
  run=$(judge_run "$1")
  if [ ! -s "$run/records.jsonl" ]; then
    ids=$("$PY" -m construct_eval.studies.balanced_order "$NATURAL" --batch "$n" --first "$n")
    $CE subset --run "$NATURAL" --out "$run" --docs "$ids" --files records,outputs,labels,provenance,samples >&2 || exit 1
    "$PY" - "$run" <<'EOF' || exit 1
import sys
from construct_eval.data.runs import RunDir
run = RunDir(sys.argv[1], create=False)
for key in ("judges", "judge", "verdict", "reflection", "construct"):  # the 1.5B judge's, not this run's
    run.drop_meta(key)
EOF
    $CE label --run "$run" > /dev/null || exit 1  # the labels' summary of these notices, not the natural run's
    $CE logprob-scores --run "$run" > /dev/null || exit 1
  fi
  echo "$run"
}
ordered_ids() {  # RUN ORDER: its document ids one a line (balanced or run order), the first LIMIT
  local run=$1 order=$2
  if [ "$order" = balanced ]; then
    "$PY" -m construct_eval.studies.balanced_order "$run" --batch 1
  else
    "$PY" -c 'import json, sys; [print(json.loads(l)["id"]) for l in open(sys.argv[1])]' "$run/records.jsonl"
  fi | { if [ "$LIMIT" -gt 0 ]; then head -n "$LIMIT"; else cat; fi; }
}
construct_each() {  # RUN MODEL ORDER: CONSTRUCT on each document of ORDER, one at a time
  local run=$1 model=$2 order=$3 i=0 id ids t0
  mapfile -t ids < <(ordered_ids "$run" "$order")
  for id in "${ids[@]}"; do
    i=$((i + 1))
    step "$(basename "$run"): document $i of ${#ids[@]}: $id"
    t0=$SECONDS
    said=$($CE construct --run "$run" --preset "$PRESET" --base-url "$URL" --model "$model" --backend llamacpp \
      --timeout 1800 --quiet --data-dir "$DATA" --ids "$id" < /dev/null) || { echo "$said"; return 1; }
    echo "$said"
    # the run's history records the documents this pass asked about, not those a resume skipped
    grep -q '^0 construct calls to make' <<< "$said" && continue
    echo "construct $id ($model, $PRESET) : $((SECONDS - t0)) s ($(git -C "$CODE" rev-parse --short HEAD))" >> "$run/commands.log"
  done
}

if want J05; then
  run=$(judge_swap_run qwen2.5-coder-0.5b "$NOTICES") || exit 1
  serve qwen2.5-coder-0.5b
  construct_each "$run" qwen2.5-coder-0.5b balanced || exit 1
fi
if want J135; then
  run=$(judge_swap_run smollm2-135m "$PILOT") || exit 1
  serve smollm2-135m
  construct_each "$run" smollm2-135m balanced || exit 1
fi
if want FIN; then
  if [ ! -s "$FINANCIAL_CONSTRUCT/records.jsonl" ]; then
    ids=$("$PY" -c 'import json, sys; print(",".join(json.loads(l)["id"] for l in open(sys.argv[1])))' "$FINANCIAL/records.jsonl")
    $CE subset --run "$FINANCIAL" --out "$FINANCIAL_CONSTRUCT" --docs "$ids" >&2 || exit 1
  fi
  serve qwen2.5-coder-1.5b
  construct_each "$FINANCIAL_CONSTRUCT" qwen2.5-coder-1.5b run || exit 1
fi
stop_server

if want E; then
  for run in "$(judge_run qwen2.5-coder-0.5b)" "$(judge_run smollm2-135m)" "$FINANCIAL_CONSTRUCT"; do
    [ -s "$run/construct.jsonl" ] || continue
    step "tables: $run"
    $CE evaluate --run "$run" > /dev/null || exit 1
    $CE paper-comparison --run "$run" > /dev/null || exit 1
    # within filled fields, paired (construct_settings_report.FILLED)
    $CE paired --run "$run" --reference construct@top --level field --by-output-kind --scorers token_logprob@top \
      > /dev/null || exit 1
  done
fi
step done
