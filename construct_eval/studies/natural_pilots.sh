#!/usr/bin/env bash
# Pilots for the natural-error study (issue 35): which packaged generator, with which prompt, on
# which benchmark dataset, gets between about 25% and 75% of its documents wrong? About 50
# documents per candidate, generated (temperature 0, JSON mode with the dataset's schema,
# token log-probs kept), labelled with `construct-eval label`; the table of every pilot's
# document error rate and seconds per document is natural_pilots.md, remade at the end by
# natural_pilots_report.py from the stored files.
#
# Model time, so it runs in the background from a git worktree pinned to a commit and writes its
# run folders (natural-pilot-*) into the main checkout. Resumable: rerun it and every finished
# document is skipped (generate resumes; label is no model call).
#
#   git worktree add --detach ../pin-natural <commit>
#   PROJECT=/work/main STOP_AT=11:30 DONE_FILE=/work/pilots.done \
#     bash ../pin-natural/construct_eval/studies/natural_pilots.sh > natural_pilots.log 2>&1 &
#
# The server: `construct-eval serve --model M --port 8093`, one at a time (the machine has two
# cores): this script starts each model's server when its pilots come, and stops the server it
# started before the next model's (only that one, by its process group). A server it did not
# start that answers on the port with another model stops the script instead. STOP_AT (UTC,
# HH:MM) ends the pilots there: the generate command running then is interrupted (its finished
# documents are kept and labelled; a rerun completes it) and no later pilot starts. ONLY (a bash
# regular expression) runs only the pilots whose name matches it, e.g. ONLY=qwen1.5b. On any exit
# the server it started is stopped; at the end (not after a failure) DONE_FILE, when given, is
# touched (the next model job waits for it).
set -uo pipefail
source "$(dirname "$0")/study_env.sh"  # CODE, PROJECT, PY, DATA, PORT, CE, step, require_pinned_code
R=$PROJECT/results/runs
LOGS=${LOG_DIR:-/tmp}
DEADLINE=$([ -n "${STOP_AT:-}" ] && date -u -d "$STOP_AT" +%s || echo 0)
timed() { local dir=$1; shift; local t0=$SECONDS; "$@"; echo "$* : $((SECONDS - t0)) s ($(git -C "$CODE" rev-parse --short HEAD))" >> "$dir/commands.log"; }
left() { [ "$DEADLINE" -eq 0 ] && echo 86400 || echo $((DEADLINE - $(date +%s))); }

step "code $(git -C "$CODE" rev-parse --short HEAD) from $CODE; runs in $PROJECT"
require_pinned_code || exit 1

SERVER_PID=
serving() { curl -sf "http://127.0.0.1:$PORT/v1/models" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["data"][0]["id"])' 2>/dev/null; }
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  step "stop the $1 server (process group $SERVER_PID)"
  kill -- -"$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=
  while curl -sf "http://127.0.0.1:$PORT/v1/models" > /dev/null; do sleep 1; done
}
CURRENT=
serve() {  # the model's server on $PORT, started here unless it already answers
  local model=$1 now
  now=$(serving)
  [ "$now" = "$model" ] && { CURRENT=$model; return 0; }
  stop_server "$CURRENT"
  now=$(serving)
  if [ -n "$now" ]; then echo "port $PORT answers with $now, a server this script did not start: stop it first"; exit 1; fi
  step "serve $model on port $PORT (log $LOGS/natural-pilot-serve-$model.log)"
  setsid $CE serve --model "$model" --port "$PORT" > "$LOGS/natural-pilot-serve-$model.log" 2>&1 &
  SERVER_PID=$!
  CURRENT=$model
  until [ "$(serving)" = "$model" ]; do
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "the $model server stopped: see $LOGS/natural-pilot-serve-$model.log"; exit 1; }
    sleep 5
  done
}
finish() {  # on any exit: stop the server this script started, remake the table
  stop_server "$CURRENT"
  "$PY" -m construct_eval.studies.natural_pilots_report "$R" > "$R/natural_pilots.md" && cat "$R/natural_pilots.md"
}
trap finish EXIT

pilot() {  # NAME MODEL generate-options...: one pilot, generated then labelled
  local name=$1 run=$R/natural-pilot-$1 model=$2 budget
  shift 2
  if [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]]; then step "skip $run: not in ONLY=$ONLY"; return 0; fi
  budget=$(left)
  if [ "$budget" -le 60 ]; then step "skip $run: STOP_AT $STOP_AT reached"; return 0; fi
  serve "$model"
  step "pilot $run ($model)"
  mkdir -p "$run"
  timed "$run" timeout --signal=INT "$budget" $CE generate --run "$run" "$@" --base-url "http://127.0.0.1:$PORT/v1" \
    --model "$model" --backend llamacpp --timeout 1800 --quiet
  $CE label --run "$run" --data-dir "$DATA"
}

# financial entities first (short sentences: fast), both packaged Qwen models with the
# benchmark's instructions; the same 50 sentences (the first 50 of a fixed sample of 600, seed 1:
# a study that grows the chosen pilot takes more of the same sample)
# (PILOT_DOCS, default 50: fewer when the machine is loaded; the reply cap is 512 tokens, ample for
# a sentence's entities: a reply that runs to it is truncated, an unparsed output, a wrong document)
FIN=(--dataset financial_ner --data-dir "$DATA" --sample 600 --seed 1 --limit "${PILOT_DOCS:-50}" --max-tokens 512
     --prompt benchmark)
pilot financial_ner-qwen0.5b-benchmark qwen2.5-coder-0.5b "${FIN[@]}"
pilot financial_ner-qwen1.5b-benchmark qwen2.5-coder-1.5b "${FIN[@]}"
# the synthetic set (its own prompt: it has no benchmark instructions), with the 1.5B model: the
# 0.5B model got all 40 documents of synthetic40 wrong
pilot synthetic-qwen1.5b qwen2.5-coder-1.5b --dataset synthetic --n 50 --seed 2
# insurance claims (all 30), 1.5B: the 0.5B model got all 30 wrong with the package's prompt
pilot insurance_claims-qwen1.5b-benchmark qwen2.5-coder-1.5b --dataset insurance_claims --data-dir "$DATA" --prompt benchmark
# the prompt's effect on the same 50 sentences: the 1.5B model with the package's prompt
pilot financial_ner-qwen1.5b-package qwen2.5-coder-1.5b "${FIN[@]/benchmark/package}"
# PII documents are long (the 0.5B model took 58 s per document): last, only if time allows
pilot pii-qwen1.5b-benchmark qwen2.5-coder-1.5b --dataset pii --data-dir "$DATA" --sample 50 --seed 1 --prompt benchmark
finish
trap - EXIT
# only a finished (or timed-out) script frees the model slot; a failed one leaves it to be fixed
[ -n "${DONE_FILE:-}" ] && touch "$DONE_FILE" && step "touched $DONE_FILE"
step done
