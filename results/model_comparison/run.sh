#!/usr/bin/env bash
# The model comparison of issue 3: each packaged model as judge of the same 6 real insurance
# claims (3 with planted errors, 3 without, from results/runs/insurance_claims-controlled20),
# with constrained decoding (grammar forcing `Rating: [[x]]` alone; per document and per
# top-level field) and without (the MT-Bench prompt, explanation then rating, per document).
# Resumable: rerun and it continues. Each model gets its own server on port 8092.
set -uo pipefail
cd "$(dirname "$0")/../.."
DATA=${DATA_DIR:-../shared/data/cleanlab}
OUT=results/model_comparison
SRC=results/runs/insurance_claims-controlled20
DOCS=insurance_claims-00005,insurance_claims-00019,insurance_claims-00021,insurance_claims-00000,insurance_claims-00001,insurance_claims-00002
CE="python -m construct_eval.cli"
PORT=8092
for model in ${MODELS:-smollm2-135m qwen2.5-coder-0.5b qwen2.5-coder-1.5b}; do
  echo "== $(date -u +%FT%TZ) $model"
  setsid $CE serve --model $model --port $PORT > $OUT/serve-$model.log 2>&1 &
  server=$!
  until curl -sf http://127.0.0.1:$PORT/v1/models > /dev/null; do sleep 2; done
  EP=(--base-url http://127.0.0.1:$PORT/v1 --model $model --backend llamacpp --concurrency 1 --timeout 1800 --quiet --data-dir "$DATA")
  for cfg in constrained free; do
    run=$OUT/$model-$cfg
    [ -s $run/records.jsonl ] || $CE subset --run $SRC --out $run --docs $DOCS --files records,outputs,labels
    t0=$SECONDS
    if [ $cfg = constrained ]; then
      $CE score --run $run --mode doc,fields --constrained grammar --explanation-cap 0 --max-tokens 16 "${EP[@]}"
    else
      $CE score --run $run --mode doc --constrained none --max-tokens 300 "${EP[@]}"
    fi
    echo "score $run: $((SECONDS - t0)) s" >> $OUT/commands.log
  done
  kill -- -$server 2> /dev/null; wait $server 2> /dev/null
done
$CE compare $OUT/*-constrained $OUT/*-free --out $OUT/table
