#!/usr/bin/env bash
# The near-miss judge study (issue 34): Qwen2.5-Coder-1.5B as judge on outputs whose planted
# errors are the hard ones (a digit slipped inside "$ 17.9 billion", a span cut short or taking
# in a neighbouring word, an entity of a neighbouring type, a date or amount in another format),
# in about 30% of the documents. Hours of model time, so, like judge_study.sh, it runs in the
# background from a git worktree pinned to a commit and writes its run folders into the main
# checkout (append-only, resumable: rerun it and every finished call is skipped).
#
#   git worktree add --detach ../near-miss-wt <commit>
#   PROJECT=/work/main bash ../near-miss-wt/construct_eval/studies/near_miss_study.sh > near_miss_study.log 2>&1 &
#
# The runs (new folders; the recorded runs are not touched):
#   financial_ner-sample200-nearmiss30   200 financial-entity sentences
#   synthetic100-nearmiss30              100 synthetic documents
# and per run, in this order (a study stopped midway leaves whole parts behind):
#   1. forced rating (`Rating: [[x]]` alone), per document and per field
#   2. P(correct): a yes/no verdict per document and per field, from the answer's log-probs
#   3. the card's free recipe (explanation, then `Rating: [[x]]`, no grammar), per document
# then the tables of each run (labels, evaluate, the paired comparisons; no model calls).
#
# The server: `construct-eval serve --model qwen2.5-coder-1.5b --port 8093`, started here if
# nothing answers on BASE_URL and SERVE is not 0. One slot: the client sends one call at a time,
# a document's calls back to back so they share the document's prompt prefix.
#
# Elsewhere (a check on the scripted server, another endpoint): BASE_URL, SERVE=0, RUNS_DIR (where
# the run folders go), N_FIN / N_SYN (documents; the run names carry the numbers), NEAR_MISS_SHARE,
# DATA_DIR, TABLES=0 (no tables at the end). tests/test_results_scripts.py runs it end to end on
# the scripted server, twice: the second time it makes no call.
set -uo pipefail
source "$(dirname "$0")/study_env.sh"  # CODE, PROJECT, PY, DATA, PORT, CE, step, require_pinned_code
R=${RUNS_DIR:-$PROJECT/results/runs}
BASE_URL=${BASE_URL:-http://127.0.0.1:$PORT/v1}
SERVE=${SERVE:-1}
MODEL=${MODEL:-qwen2.5-coder-1.5b}
N_FIN=${N_FIN:-200}
N_SYN=${N_SYN:-100}
NEAR=${NEAR_MISS_SHARE:-0.5}   # the chance that a planted error is a near miss (recorded in run.json)
EP=(--base-url "$BASE_URL" --model "$MODEL" --backend llamacpp --quiet --data-dir "$DATA")
FORCED=(--constrained grammar --explanation-cap 0 --max-tokens 16)
FREE=(--constrained none --max-tokens 400)
timed() { local dir=$1; shift; local t0=$SECONDS; "$@"; local rc=$?; echo "$* : $((SECONDS - t0)) s ($(git -C "$CODE" rev-parse --short HEAD))" >> "$dir/commands.log"; return $rc; }

step "code $(git -C "$CODE" rev-parse --short HEAD) from $CODE; runs in $R; judge $MODEL at $BASE_URL"
require_pinned_code || exit 1
mkdir -p "$R"

if ! curl -sf "$BASE_URL/models" > /dev/null; then
  [ "$SERVE" = 0 ] && { echo "nothing answers at $BASE_URL and SERVE=0"; exit 1; }
  step serve $MODEL on port $PORT
  setsid $CE serve --model $MODEL --port $PORT > "$R/serve-$MODEL-$PORT.log" 2>&1 &
  until curl -sf "$BASE_URL/models" > /dev/null; do sleep 5; done
fi

FIN=$R/financial_ner-sample$N_FIN-nearmiss30
SYN=$R/synthetic$N_SYN-nearmiss30
# 0. the outputs: ground truth with near-miss errors planted in 30% of the documents (no LLM)
if [ ! -s "$FIN/outputs.jsonl" ]; then
  step inject "$FIN"
  mkdir -p "$FIN"
  $CE inject --run "$FIN" --dataset financial_ner --data-dir "$DATA" --sample "$N_FIN" --seed 0 \
    --doc-error-rate 0.3 --error-seed 1 --near-miss-share "$NEAR" || exit 1
fi
if [ ! -s "$SYN/outputs.jsonl" ]; then
  step inject "$SYN"
  mkdir -p "$SYN"
  $CE inject --run "$SYN" --dataset synthetic --n "$N_SYN" --seed 2 \
    --doc-error-rate 0.3 --error-seed 1 --near-miss-share "$NEAR" || exit 1
fi
[ -s "$FIN/labels.jsonl" ] || $CE label --run "$FIN" --data-dir "$DATA"
[ -s "$SYN/labels.jsonl" ] || $CE label --run "$SYN"

for run in "$FIN" "$SYN"; do
  step "part 1: $run forced, doc + fields"
  timed "$run" $CE score --run "$run" --mode doc,fields "${FORCED[@]}" "${EP[@]}"
  step "part 2: $run verdicts, doc + fields"
  timed "$run" $CE verdict --run "$run" --mode doc,fields "${EP[@]}"
  step "part 3: $run free recipe, doc"
  timed "$run" $CE score --run "$run" --mode doc "${FREE[@]}" "${EP[@]}"
done

# the tables (no model calls; analyse_all.sh remakes them with every other run's)
[ "${TABLES:-1}" = 0 ] && { step done; exit 0; }
for run in "$FIN" "$SYN"; do
  step "tables: $run"
  $CE label --run "$run" --data-dir "$DATA" > /dev/null
  $CE evaluate --run "$run" > /dev/null
  $CE paired --run "$run" --reference judge-doc --level document > /dev/null
  $CE paired --run "$run" --reference judge-field --level field > /dev/null
done
step done
