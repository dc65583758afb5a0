#!/usr/bin/env bash
# The judge-side study: Qwen2.5-Coder-1.5B as judge, on enough wrong documents
# that intervals can rank scorers. Hours of model time, so it runs in the background from a
# git worktree pinned to a commit (refactoring main cannot change the code of a running job),
# and writes its run folders into the main checkout (append-only, resumable: rerun this script
# and every finished call is skipped; tests/test_recorded_runs_resume.py keeps the keys fixed).
#
#   git worktree add --detach ../judge-wt <commit>
#   PROJECT=/work/main bash ../judge-wt/construct_eval/studies/judge_study.sh > judge_study.log 2>&1 &
#
# The server: `construct-eval serve --model qwen2.5-coder-1.5b --port 8093` (started here if
# nothing answers). It has one slot; the client learns that from the server and sends one call
# at a time, a document's calls back to back so they share the document's prompt prefix.
set -uo pipefail
source "$(dirname "$0")/study_env.sh"  # CODE, PROJECT, PY, DATA, PORT, CE, step, require_pinned_code
R=$PROJECT/results/runs
MODEL=qwen2.5-coder-1.5b
EP=(--base-url http://127.0.0.1:$PORT/v1 --model $MODEL --backend llamacpp --quiet --data-dir "$DATA")
FORCED=(--constrained grammar --explanation-cap 0 --max-tokens 16)
timed() { local dir=$1; shift; local t0=$SECONDS; "$@"; echo "$* : $((SECONDS - t0)) s ($(git -C "$CODE" rev-parse --short HEAD))" >> "$dir/commands.log"; }

step "code $(git -C "$CODE" rev-parse --short HEAD) from $CODE; runs in $PROJECT"
require_pinned_code || exit 1

if ! curl -sf http://127.0.0.1:$PORT/v1/models > /dev/null; then
  step serve $MODEL on port $PORT
  setsid $CE serve --model $MODEL --port $PORT > "$R/serve-$MODEL-$PORT.log" 2>&1 &
  until curl -sf http://127.0.0.1:$PORT/v1/models > /dev/null; do sleep 5; done
fi

# 0. the main dataset: 600 financial-entity sentences, planted errors in 30% of them (no LLM)
MAIN=$R/financial_ner-sample600-controlled30
if [ ! -s $MAIN/outputs.jsonl ]; then
  step inject $MAIN
  mkdir -p $MAIN
  $CE inject --run $MAIN --dataset financial_ner --data-dir "$DATA" --sample 600 --seed 0 --doc-error-rate 0.3 --error-seed 0
fi
# labels are analysis, not model calls: analyse_all.sh relabels with main's rules; here only once
[ -s $MAIN/labels.jsonl ] || $CE label --run $MAIN --data-dir "$DATA"

# Order of the parts: the card's order, except that the free recipe (part 2) runs on the 200
# documents the order and verdict parts share first and on the rest last, so a study stopped
# midway leaves finished, paired parts behind (each part resumes where it stopped).

# 1. the calibration core: forced rating (`Rating: [[x]]` alone), per document and per field
step "part 1: $MAIN forced, doc + fields"
timed $MAIN $CE score --run $MAIN --mode doc,fields "${FORCED[@]}" "${EP[@]}"

# 3. order: the forced document rating under two more orders, first 200 documents
step "part 3: $MAIN forced doc, fields reversed and output before document (200 documents)"
for v in reversed o-s-r; do
  timed $MAIN $CE score --run $MAIN --mode doc --variant $v --limit 200 "${FORCED[@]}" "${EP[@]}"
done
# 4. P(correct): a yes/no verdict per document and per field, from the answer's log-probs (200 documents)
step "part 4: $MAIN verdicts, doc + fields (200 documents)"
timed $MAIN $CE verdict --run $MAIN --mode doc,fields --limit 200 "${EP[@]}"

# 2a. the card's free recipe (explanation, then `Rating: [[x]]`, no grammar), document level,
#     on the same first 200 documents as parts 3 and 4 (the paired forced-vs-free comparison)
step "part 2a: $MAIN free recipe, doc (200 documents)"
timed $MAIN $CE score --run $MAIN --mode doc --constrained none --max-tokens 400 --limit 200 "${EP[@]}"

# 5. errors a generator really made: the recorded generated financial-entities run, forced, per field
GEN=$R/financial_ner-sample200
step "part 5: $GEN forced, fields"
timed $GEN $CE score --run $GEN --mode fields "${FORCED[@]}" "${EP[@]}"

# 6. the synthetic set: 200 documents, planted errors in 30% (60 wrong), forced, document level
SYN=$R/synthetic200-controlled30
if [ ! -s $SYN/outputs.jsonl ]; then
  step inject $SYN
  mkdir -p $SYN
  $CE inject --run $SYN --dataset synthetic --n 200 --seed 1 --doc-error-rate 0.3 --error-seed 0
fi
[ -s $SYN/labels.jsonl ] || $CE label --run $SYN
step "part 6: $SYN forced, doc"
timed $SYN $CE score --run $SYN --mode doc "${FORCED[@]}" "${EP[@]}"
# 2b. the free recipe on the other 400 documents: last, since it is the longest part (about
#     18 s a call, 3 hours for 600) and the paired comparison already has its 200 documents
step "part 2b: $MAIN free recipe, doc (all 600 documents)"
timed $MAIN $CE score --run $MAIN --mode doc --constrained none --max-tokens 400 "${EP[@]}"
step done
