#!/usr/bin/env bash
# The natural-error study (issue 35): errors a packaged generator really makes, judged as the
# judge study judged planted ones, and the paper's own comparison on them (CONSTRUCT-style
# reflection plus self-consistency against the judge per document, the judge per field and
# token log-probs), then the fourth dataset's run (the offline rebuild of the data-table set).
#
# Model time, so it runs in the background from a git worktree pinned to a commit and writes its
# run folders into the main checkout; resumable (rerun it: every finished call is skipped, and
# each part resumes where it stopped). The parts come cheapest and most important first:
#
#   A  generate (the chosen pilot's setting) in steps of STEP documents of one fixed sample until
#      >= WANT_WRONG wrong and >= WANT_RIGHT right documents exist (or the sample is used up);
#      labels; the generator's token log-probs as a scorer (no call)
#   B  the judge: 1 forced rating per document and per field; 2 P(correct) verdicts per document
#      and per field; 3 the free recipe per document; 4 the reflection ensemble on the first
#      REFLECT_DOCS documents (all of them when REFLECT_DOCS is 0). With ORDER=balanced, every
#      B part and C take the documents wrong and right alternately (balanced_order.py), BATCH at
#      a time, so what is judged when it stops has both classes in equal numbers
#   C  self-consistency: SAMPLES generator samples at temperature 1 for the first CONSISTENCY_DOCS
#      documents in ORDER (all of them when CONSISTENCY_DOCS is 0), and the consistency scorer (no call)
#   With BY_DOC=1 (and ORDER=balanced) the B parts, and C when the generator is the judge's model,
#   run one document at a time instead of part after part: a document's judge calls then share its
#   prompt prefix across parts on the one-slot server (the forced rating, the verdicts and the free
#   recipe open with the same system message and document, about 25 s of prompt on 2 cores, computed
#   once instead of three times), and every document judged when it stops has every method; FROM=N
#   starts at the N-th document of the order (natural_judging.md's "every method" count plus one)
#   D  the fourth dataset: data_table_rebuild (120 tables, NOT the benchmark's rows) generated
#      with the same generator and the benchmark's instructions, labelled, judged (forced, per
#      document and per field)
#   E  tables (no model calls): labels, self-consistency (a BY_DOC=1 run stopped early never
#      reached the end of C), the combination CONSTRUCT-style (reflection + consistency,
#      rank mean), evaluate (precision and recall at the review budgets, AUROC, the field prior),
#      calibrate (what each rating value means), paired differences with Holm at both levels,
#      the paper's comparison (CONSTRUCT-style against its three baselines on the same items) and
#      the decision tables (decisions.py; runs of at least 100 labelled documents); on the v2
#      notices, first a label-free rule as a ceiling beside the scores (contact_rule.py)
#
#   git worktree add --detach ../pin-natural <commit>
#   PROJECT=/work/main GEN_MODEL=qwen2.5-coder-1.5b bash ../pin-natural/construct_eval/studies/natural_study.sh \
#     > natural_study.log 2>&1 &
#   PARTS=A,B1 ...   # only these parts (default: all, in the order above)
#   DATASET=synthetic PROMPT=package KINDS=shipping_notice MAX_TOKENS=1536 ...   # the synthetic set's
#                    shipping notices only (the first notices' setting: its pilot's rate was in range,
#                    but one omission decided every label: natural_error_patterns.md)
#   DATASET=synthetic PROMPT=package KINDS=shipping_notice_v2 ...   # the notices' second version (the
#                    contact named in five ways, a sender, rescheduled deliveries): the study's setting
#   PARTS=B1,B2,B3,B4,C BY_DOC=1 ORDER=balanced SAMPLE=600 MAX_TOKENS=1536 ...   # with the line above: how
#                    its judging runs (about 5 minutes a notice with every part)
#
# One model server at a time on PORT (8093), started here when its part comes and stopped (only
# the one this script started) before another model's; with BASE_URL set, that endpoint is used
# for every part instead and no server is managed (the scripted server's check does that).
set -uo pipefail
source "$(dirname "$0")/study_env.sh"  # CODE, PROJECT, PY, DATA, PORT, CE, step, require_pinned_code
R=${RUNS:-$PROJECT/results/runs}
LOGS=${LOG_DIR:-/tmp}
DATASET=${DATASET:-financial_ner}
GEN_MODEL=${GEN_MODEL:-qwen2.5-coder-1.5b}
JUDGE_MODEL=${JUDGE_MODEL:-qwen2.5-coder-1.5b}
PROMPT=${PROMPT:-benchmark}
SAMPLE=${SAMPLE:-600}          # the fixed sample the documents come from (seed 1, as the pilots)
STEP=${STEP:-100}
WANT_WRONG=${WANT_WRONG:-120}
WANT_RIGHT=${WANT_RIGHT:-120}
REFLECT_DOCS=${REFLECT_DOCS:-200}
CONSTRUCT_PRESET=${CONSTRUCT_PRESET:-medium}
SAMPLES=${SAMPLES:-5}
CONSISTENCY_DOCS=${CONSISTENCY_DOCS:-200}
TABLES=${TABLES:-120}
MAX_TOKENS=${MAX_TOKENS:-512}
PARTS=${PARTS:-A,B1,B2,B3,B4,C,D,E}
ORDER=${ORDER:-run}             # run: the run's order; balanced: wrong and right alternately (B parts and C)
BATCH=${BATCH:-20}
BY_DOC=${BY_DOC:-0}             # 1: the B parts (and C with the judge's model) document by document, in ORDER=balanced
FROM=${FROM:-1}                 # BY_DOC=1: start at this document of the order (those before it done; a resume
                                # would skip their calls anyway, at about 10 s a document: natural_judging.md counts them)
KINDS=${KINDS:-}                # synthetic only: these document kinds (e.g. shipping_notice), ids kept
RUN=$R/natural-$DATASET${KINDS:+-${KINDS//,/+}}-$GEN_MODEL-$PROMPT
TAB=$R/natural-data_table_rebuild-$GEN_MODEL-$PROMPT
FORCED=(--constrained grammar --explanation-cap 0 --max-tokens 16)
timed() { local dir=$1; shift; local t0=$SECONDS; "$@"; echo "$* : $((SECONDS - t0)) s ($(git -C "$CODE" rev-parse --short HEAD))" >> "$dir/commands.log"; }
want() { [[ ",$PARTS," == *",$1,"* ]]; }
in_order() {  # FIRST CMD...: CMD on the first FIRST documents (0: all), in ORDER
  local first=$1 cut=(); shift
  if [ "$ORDER" = balanced ]; then
    [ "$first" -gt 0 ] && cut=(--first "$first")
    "$PY" -m construct_eval.studies.balanced_order "$RUN" --batch "$BATCH" "${cut[@]}" |
      while read -r ids; do "$@" --ids "$ids" < /dev/null || exit 1; done
  else
    [ "$first" -gt 0 ] && cut=(--limit "$first")
    "$@" "${cut[@]}"
  fi
}

step "code $(git -C "$CODE" rev-parse --short HEAD) from $CODE; runs in $R; parts $PARTS"
require_pinned_code || exit 1

SERVER_PID=
CURRENT=
serving() { curl -sf "$URL/models" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["data"][0]["id"])' 2>/dev/null; }
stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  step "stop the $CURRENT server (process group $SERVER_PID)"
  kill -- -"$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=
  while curl -sf "$URL/models" > /dev/null; do sleep 1; done
}
trap stop_server EXIT
URL=${BASE_URL:-http://127.0.0.1:$PORT/v1}
# B and C's commands, on the endpoint serve chose (EP); in_order or by_document adds --ids
model_parts() {
  B1=($CE score --run "$RUN" --mode doc,fields "${FORCED[@]}" "${EP[@]}" --data-dir "$DATA")
  B2=($CE verdict --run "$RUN" --mode doc,fields "${EP[@]}" --data-dir "$DATA")
  B3=($CE score --run "$RUN" --mode doc --constrained none --max-tokens 400 "${EP[@]}" --data-dir "$DATA")
  B4=($CE reflect --run "$RUN" "${EP[@]}" --data-dir "$DATA")
  B5=($CE construct --run "$RUN" --preset "$CONSTRUCT_PRESET" "${EP[@]}" --data-dir "$DATA")
  B6=($CE score --run "$RUN" --mode fields-joint --constrained json --max-tokens 1536 "${EP[@]}" --data-dir "$DATA")
  C=($CE generate --run "$RUN" "${SRC[@]}" --data-dir "$DATA" --max-tokens "$MAX_TOKENS" --samples "$SAMPLES"
    --sample-temperature 1.0 "${EP[@]}")
}
serve() {  # MODEL: its server on $PORT (started here unless it answers already); nothing with BASE_URL
  local model=$1 now
  EP=(--base-url "$URL" --model "$model" --backend llamacpp --timeout 1800 --quiet)
  model_parts
  [ -n "${BASE_URL:-}" ] && return 0
  now=$(serving)
  [ "$now" = "$model" ] && { CURRENT=$model; return 0; }
  stop_server
  now=$(serving)
  if [ -n "$now" ]; then echo "port $PORT answers with $now, a server this script did not start: stop it first"; exit 1; fi
  step "serve $model on port $PORT (log $LOGS/natural-study-serve-$model.log)"
  setsid $CE serve --model "$model" --port "$PORT" > "$LOGS/natural-study-serve-$model.log" 2>&1 &
  SERVER_PID=$!
  CURRENT=$model
  until [ "$(serving)" = "$model" ]; do
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "the $model server stopped: see $LOGS/natural-study-serve-$model.log"; exit 1; }
    sleep 5
  done
}
counts() {  # "WRONG RIGHT GENERATED" from the run's label summary
  "$PY" -c "import json, sys; l = json.load(open(sys.argv[1])).get('labels') or {}; n = l.get('documents', 0); w = l.get('documents_wrong', 0); print(w, n - w, n)" "$1/run.json" 2>/dev/null || echo "0 0 0"
}
SRC=(--dataset "$DATASET" --sample "$SAMPLE" --seed 1 --prompt "$PROMPT")
[ "$DATASET" = synthetic ] && SRC=(--dataset synthetic --n "$SAMPLE" --seed 2 ${KINDS:+--synthetic-kinds "$KINDS"})
mkdir -p "$RUN"

# A. generation until both classes have enough documents
if want A; then
  serve "$GEN_MODEL"
  limit=$STEP
  while :; do
    [ "$limit" -gt "$SAMPLE" ] && limit=$SAMPLE
    step "part A: $RUN generate (first $limit of the sample)"
    timed "$RUN" $CE generate --run "$RUN" "${SRC[@]}" --data-dir "$DATA" --limit "$limit" --max-tokens "$MAX_TOKENS" "${EP[@]}" || exit 1
    $CE label --run "$RUN" --data-dir "$DATA" || exit 1
    read -r wrong right done <<< "$(counts "$RUN")"
    step "part A: $done documents, $wrong wrong, $right right"
    if [ "$wrong" -ge "$WANT_WRONG" ] && [ "$right" -ge "$WANT_RIGHT" ]; then break; fi
    if [ "$limit" -ge "$SAMPLE" ]; then step "part A: the sample of $SAMPLE is used up short of $WANT_WRONG/$WANT_RIGHT"; break; fi
    limit=$((limit + STEP))
  done
  $CE logprob-scores --run "$RUN"
fi

within() { [ "$2" -eq 0 ] || [ "$1" -le "$2" ]; }  # I N: the I-th document is among the first N (0: all)
C_BY_DOC=0
[ "$BY_DOC" = 1 ] && want C && [ "$GEN_MODEL" = "$JUDGE_MODEL" ] && C_BY_DOC=1
by_document() {  # every wanted B part, and C when C_BY_DOC, on one document after another in the balanced order
  local i=0 id ids
  mapfile -t ids < <("$PY" -m construct_eval.studies.balanced_order "$RUN" --batch 1)
  for id in "${ids[@]}"; do
    i=$((i + 1))
    [ "$i" -lt "$FROM" ] && continue
    step "document $i of ${#ids[@]}: $id"
    if want B1; then "${B1[@]}" --ids "$id" < /dev/null || return 1; fi
    if want B2; then "${B2[@]}" --ids "$id" < /dev/null || return 1; fi
    if want B3; then "${B3[@]}" --ids "$id" < /dev/null || return 1; fi
    if want B4 && within "$i" "$REFLECT_DOCS"; then "${B4[@]}" --ids "$id" < /dev/null || return 1; fi
    if want B5; then "${B5[@]}" --ids "$id" < /dev/null || return 1; fi
    if want B6; then "${B6[@]}" --ids "$id" < /dev/null || return 1; fi
    if [ "$C_BY_DOC" = 1 ] && within "$i" "$CONSISTENCY_DOCS"; then "${C[@]}" --ids "$id" < /dev/null || return 1; fi
  done
}

# B. the judge, part by part or document by document (a document's calls back to back on the one-slot server)
B_WANTED=0
for part in B1 B2 B3 B4 B5 B6; do want $part && B_WANTED=1; done
if [ "$BY_DOC" = 1 ] && { [ "$B_WANTED" = 1 ] || [ "$C_BY_DOC" = 1 ]; }; then
  [ "$ORDER" = balanced ] || { echo "BY_DOC=1 needs ORDER=balanced"; exit 1; }
  serve "$JUDGE_MODEL"
  step "parts $PARTS document by document (C too: $([ "$C_BY_DOC" = 1 ] && echo yes || echo no)): $RUN"
  timed "$RUN" by_document || exit 1
elif [ "$B_WANTED" = 1 ]; then
  serve "$JUDGE_MODEL"
  if want B1; then
    step "part B1: $RUN forced rating, doc + fields"
    timed "$RUN" in_order 0 "${B1[@]}"
  fi
  if want B2; then
    step "part B2: $RUN P(correct) verdicts, doc + fields"
    timed "$RUN" in_order 0 "${B2[@]}"
  fi
  if want B3; then
    step "part B3: $RUN free recipe, doc"
    timed "$RUN" in_order 0 "${B3[@]}"
  fi
  if want B4; then
    step "part B4: $RUN reflection ensemble (${REFLECT_DOCS/#0/all} documents)"
    timed "$RUN" in_order "$REFLECT_DOCS" "${B4[@]}"
  fi
  if want B5; then
    step "part B5: $RUN CONSTRUCT ($CONSTRUCT_PRESET)"
    timed "$RUN" in_order 0 "${B5[@]}"
  fi
  if want B6; then
    step "part B6: $RUN per-field judge, explanation then rating (fields-joint)"
    timed "$RUN" in_order 0 "${B6[@]}"
  fi
fi

# C. self-consistency: generator samples at temperature 1 (the same documents as B4: the first ones, in ORDER)
if want C; then
  if [ "$C_BY_DOC" = 0 ]; then
    serve "$GEN_MODEL"
    n=$CONSISTENCY_DOCS
    [ "$n" -gt 0 ] || read -r _ _ n <<< "$(counts "$RUN")"  # 0: every document part A generated, no new one
    step "part C: $RUN $SAMPLES samples for the first $n documents"
    timed "$RUN" in_order "$n" "${C[@]}"
  fi
  $CE consistency --run "$RUN" --data-dir "$DATA"
fi

# D. the fourth dataset: the offline rebuild of the data-table set (not the benchmark's rows)
if want D; then
  mkdir -p "$TAB"
  serve "$GEN_MODEL"
  step "part D: $TAB generate ($TABLES tables)"
  timed "$TAB" $CE generate --run "$TAB" --dataset data_table_rebuild --n "$TABLES" --seed 0 --prompt "$PROMPT" "${EP[@]}"
  $CE label --run "$TAB"
  $CE logprob-scores --run "$TAB"
  serve "$JUDGE_MODEL"
  step "part D: $TAB forced rating, doc + fields"
  timed "$TAB" $CE score --run "$TAB" --mode doc,fields "${FORCED[@]}" "${EP[@]}"
fi
stop_server

# E. tables from the stored files (no model call)
if want E; then
  step "part E: tables"
  for run in "$RUN" "$TAB"; do
    [ -s "$run/outputs.jsonl" ] || continue
    $CE label --run "$run" --data-dir "$DATA"
    if [ -s "$run/samples.jsonl" ]; then $CE consistency --run "$run" --data-dir "$DATA" > /dev/null; fi  # BY_DOC=1 stopped early never reached it
    if grep -q '"reflection' "$run/scores.jsonl" 2> /dev/null && grep -q '"consistency' "$run/scores.jsonl"; then
      # CONSTRUCT-style: reflection + consistency, per document and per top-level field
      $CE combine --run "$run" --scorers reflection,consistency:mean,reflection@top,consistency@top > /dev/null
    fi
    if [ "$run" = "$RUN" ] && [ "$KINDS" = shipping_notice_v2 ]; then
      "$PY" -m construct_eval.studies.contact_rule "$run" --import || exit 1  # a label-free rule, as a ceiling
    fi
    if [ -s "$run/judgments.jsonl" ] || [ -s "$run/scores.jsonl" ]; then
      $CE evaluate --run "$run" > /dev/null && $CE calibrate --run "$run" > /dev/null
      $CE paired --run "$run" --reference judge-doc --level document > /dev/null
      $CE paired --run "$run" --reference judge-field --level field > /dev/null
      if [ "$run" = "$TAB" ]; then  # the tables' field kinds (counts, types, maxima, identifiers), one by one
        $CE paired --run "$run" --reference judge-field --level field --by-output-kind > /dev/null
      fi
      $CE paper-comparison --run "$run" > /dev/null  # the paper's four methods on the same items
      if [ -s "$run/construct.jsonl" ]; then  # CONSTRUCT within filled fields, paired (construct_settings_report.FILLED)
        $CE paired --run "$run" --reference construct@top --level field --by-output-kind --scorers token_logprob@top > /dev/null
      fi
      "$PY" -m construct_eval.studies.decisions "$run" > /dev/null || exit 1  # the decision tables (>= 100 documents)
    fi
  done
fi
step done
