#!/usr/bin/env bash
# Every table and figure of the recorded runs, from their stored files (no model calls):
# labels (both readings of null-like strings where they differ), detection tables with the
# field-prior baseline, calibration and what each rating value means, positional bias for the
# rating and its expected rating, and the paired comparisons of the TLM anchor. Rerun it after
# any change to the label rules or the analyses; results/runs/README.md's table is printed by
# status.py afterwards.
#
#   bash construct_eval/studies/analyse_all.sh          # both parts, in order
#   bash construct_eval/studies/analyse_all.sh labels   # part 1: label every run (and combine the judge study's scores)
#   bash construct_eval/studies/analyse_all.sh tables   # part 2: every table from the labels part 1 wrote
#
# Part 1 rewrites the run files the other analyses read (labels.jsonl, plausibility.jsonl, the
# combined scores in scores.jsonl); part 2 writes only metrics/ and figures/ and the two reports,
# so once part 1 is done, part 2 can run beside other readers of the run files (reproduce.sh runs
# the decision tables beside it).
set -uo pipefail
cd "$(dirname "$0")/../.."
PART=${1:-all}
case $PART in
  labels|tables|all) ;;
  *) echo "usage: analyse_all.sh [labels|tables]" >&2; exit 2 ;;
esac
DATA=${DATA_DIR:-../shared/data/cleanlab}
CE="${PYTHON:-.venv/bin/python} -m construct_eval.cli"
R=results/runs
export PYTHONWARNINGS=ignore::UserWarning  # duplicate-row warnings still show in the tables' columns

# The judge study's main run. Once a second prompt order is judged, every order is named and the
# default's name says so. Its label-free combination, fixed before looking: the rank average of
# the scores every document has (the forced rating, its expected rating, and the per-field minimum
# of each), per document and per field (beside it the fitted combiner, marked as using labels).
M=$R/financial_ner-sample600-controlled30
REF=judge-doc
ORDERS=default
if [ -s $M/judgments.jsonl ]; then
  grep -q 'sec:r-s-o|fields:reversed' $M/judgments.jsonl && ORDERS=$ORDERS,reversed
  grep -q 'sec:o-s-r|fields:original' $M/judgments.jsonl && ORDERS=$ORDERS,o-s-r
  [ "$ORDERS" != default ] && REF='judge-doc[sec:r-s-o|fields:original]'
fi
COMBINED="$REF,$REF:expected,judge-field:min,judge-field:expected:min,judge-field,judge-field:expected"

for run in $R/*/ results/model_comparison/*/ results/tlm_anchor/*/; do
  [ -s "$run/outputs.jsonl" ] || continue
  echo "== $run"
  if [ "$PART" != tables ]; then
    $CE label --run "$run" --data-dir "$DATA"
    if [ "${run%/}" = "$M" ] && [ -s $M/judgments.jsonl ]; then $CE combine --run $M --scorers "$COMBINED" > /dev/null; fi
  fi
  if [ "$PART" != labels ] && { [ -s "$run/judgments.jsonl" ] || [ -s "$run/scores.jsonl" ]; }; then
    $CE evaluate --run "$run" > /dev/null && $CE calibrate --run "$run" > /dev/null
  fi
done
if [ "$PART" = labels ]; then echo "== labelled"; exit 0; fi
# positional bias, for the written rating and for its log-prob expected rating (two tables each)
for spec in "insurance_claims-controlled20:default,reversed,o-s-r" "pii-sample50-controlled20:default,reversed,shuffled1"; do
  IFS=: read -r name variants <<< "$spec"
  for value in rating expected_rating; do
    $CE bias --run $R/$name --variants $variants --value $value > /dev/null
  done
done
# the TLM anchor: every scorer on the same 12 claims against TLM, one prompt order (the default)
T=results/tlm_anchor/insurance_claims-controlled20-tlm12
$CE paired --run $T --reference tlm --level document \
  --scorers "judge-doc[sec:r-s-o|fields:original]:expected,reflection,combo:rank-mean[judge-doc[sec:r-s-o|fields:original]:expected+reflection+tlm]" > /dev/null
$CE paired --run $T --reference tlm@top --level field \
  --scorers "reflection@top,combo:rank-mean[reflection@top+tlm@top]@top" > /dev/null
# the generator-side signals against the generator's token log-probs, per leaf (and the field prior)
C=$R/insurance_claims
$CE paired --run $C --reference token_logprob@leaf --level field \
  --scorers "consistency@leaf,combo:rank-mean[consistency@leaf+token_logprob@leaf]@leaf,field-prior-uses-labels@leaf" > /dev/null
for run in synthetic40 pii-sample50 financial_ner-sample200; do
  $CE paired --run $R/$run --reference token_logprob@leaf --level field --scorers field-prior-uses-labels@leaf > /dev/null
done
# the judge study: every scorer against the forced rating, the comparison fixed before
# looking (Holm across each table); tables say underpowered while the runs are in progress
if [ -s $M/judgments.jsonl ]; then
  if [ "$ORDERS" != default ]; then
    # tables and figures under the forced rating's former name (judge-doc) are stale
    rm -f $M/metrics/*_judge-doc.csv $M/metrics/*_judge-doc.md $M/figures/*_judge-doc.png
    for value in rating expected_rating; do  # the forced rating only: the run's first elicitation
      $CE bias --run $M --variants $ORDERS --value $value > /dev/null
    done
  fi
  if grep -q '"constrained":"none"' $M/judgments.jsonl; then
    for value in rating expected_rating; do  # the forced rating against the free recipe, same documents
      $CE bias --run $M --variants default --across elicitations --value $value > /dev/null
    done
  fi
  $CE paired --run $M --reference "$REF" --level document > /dev/null
  $CE paired --run $M --reference judge-field --level field > /dev/null
  $CE paired --run $M --reference judge-field --level field --by-output-kind > /dev/null
fi
# the judge study's other runs: the generated financial entities (part 5), the synthetic set (part 6),
# and the near-miss study's runs (near_miss_study.sh; skipped while they are not judged)
for run in financial_ner-sample200 synthetic200-controlled30 financial_ner-sample200-nearmiss30 synthetic100-nearmiss30; do
  if grep -qs '"mode":"field"' $R/$run/judgments.jsonl; then
    $CE paired --run $R/$run --reference judge-field --level field > /dev/null
    $CE paired --run $R/$run --reference judge-field --level field --by-output-kind > /dev/null
  fi
  if [ $run = financial_ner-sample200 ]; then  # the generator's log-probs against the judge's best field score too
    $CE paired --run $R/$run --reference judge-field:expected --level field --by-output-kind > /dev/null
  fi
  if grep -qs '"mode":"doc"' $R/$run/judgments.jsonl; then
    $CE paired --run $R/$run --reference judge-doc --level document > /dev/null
  fi
done
# the field AUROC within output kinds across runs, and the judge study's state, from the tables just made
${PYTHON:-.venv/bin/python} -m construct_eval.studies.null_split > $R/null_split.md
${PYTHON:-.venv/bin/python} -m construct_eval.studies.judge_study_report > $R/judge_study.md
echo "== done"
