#!/usr/bin/env bash
# The exact commands that made the recorded runs under results/runs/. Every step is
# resumable: rerun the script and it continues where it stopped (finished steps cost nothing).
# Needs the local server:  construct-eval serve --model qwen2.5-coder-0.5b --port 8091
set -uo pipefail
cd "$(dirname "$0")/../.."
DATA=${DATA_DIR:-../shared/data/cleanlab}
R=results/runs
EP=(--base-url http://127.0.0.1:${PORT:-8091}/v1 --model qwen2.5-coder-0.5b --backend llamacpp --concurrency 1 --timeout 1800 --quiet)
CE="${PYTHON:-.venv/bin/python} -m construct_eval.cli"
step() { echo "== $(date -u +%FT%TZ) $*"; }
timed() { local dir=$1; shift; local t0=$SECONDS; "$@"; echo "$* : $((SECONDS - t0)) s" >> "$dir/commands.log"; }

# 2. controlled-error outputs at a 20% document error rate (no LLM) and labels
for spec in "insurance_claims-controlled20:insurance_claims:" "synthetic40-controlled20:synthetic:--n 40" \
            "pii-sample50-controlled20:pii:--sample 50" "financial_ner-sample200-controlled20:financial_ner:--sample 200"; do
  IFS=: read -r name ds extra <<< "$spec"
  if [ ! -s $R/$name/outputs.jsonl ]; then
    step inject $name
    $CE inject --run $R/$name --dataset $ds --data-dir "$DATA" $extra --doc-error-rate 0.2 --error-seed 0
  fi
done
for run in $R/*/; do [ -s "$run/outputs.jsonl" ] && $CE label --run "$run" --data-dir "$DATA" > /dev/null; done

# 3. the local 0.5B model as judge, grammar forcing the rating alone (`Rating: [[x]]`, recorded
#    as constrained=grammar:rating-only).
J=(--constrained grammar --explanation-cap 0 --max-tokens 16 --data-dir "$DATA")
step judge insurance_claims-controlled20 doc
timed $R/insurance_claims-controlled20 $CE score --run $R/insurance_claims-controlled20 --mode doc "${J[@]}" "${EP[@]}"
step bias insurance_claims-controlled20: two more orders
for v in reversed o-s-r; do
  timed $R/insurance_claims-controlled20 $CE score --run $R/insurance_claims-controlled20 --mode doc --variant $v "${J[@]}" "${EP[@]}"
done
step bias pii-sample50-controlled20: three orders, doc, first 20 documents, 2400-token prompts
for v in default reversed shuffled1; do
  timed $R/pii-sample50-controlled20 $CE score --run $R/pii-sample50-controlled20 --mode doc --variant $v --limit 20 "${J[@]}" "${EP[@]}"
done

# 4. scorers beyond one rating, on few documents first: each is resumable and
#    extends to more documents by raising --limit
step reflect: the 6 claims of the model comparison, qwen2.5-coder-0.5b
MC=results/model_comparison/qwen2.5-coder-0.5b-constrained
[ -s $MC/records.jsonl ] && timed $MC $CE reflect --run $MC --data-dir "$DATA" "${EP[@]}"
step reflect: all 30 insurance claims with controlled errors
timed $R/insurance_claims-controlled20 $CE reflect --run $R/insurance_claims-controlled20 --data-dir "$DATA" "${EP[@]}"

# 5. generator outputs (the local 0.5B model as generator; token log-probs on)
step generate insurance_claims
mkdir -p $R/insurance_claims
timed $R/insurance_claims $CE generate --run $R/insurance_claims --dataset insurance_claims --data-dir "$DATA" "${EP[@]}"

step consistency: 5 samples at temperature 1 for the first 6 generated insurance claims, then all 30
timed $R/insurance_claims $CE generate --run $R/insurance_claims --dataset insurance_claims --data-dir "$DATA" --limit 6 --samples 5 "${EP[@]}"

step generate synthetic40
timed $R/synthetic40 $CE generate --run $R/synthetic40 --dataset synthetic --n 40 --seed 0 "${EP[@]}"

step generate pii-sample50
mkdir -p $R/financial_ner-sample200 $R/pii-sample50
timed $R/pii-sample50 $CE generate --run $R/pii-sample50 --dataset pii --data-dir "$DATA" --sample 50 --seed 0 "${EP[@]}"
step generate financial_ner-sample200
timed $R/financial_ner-sample200 $CE generate --run $R/financial_ner-sample200 --dataset financial_ner --data-dir "$DATA" --sample 200 --seed 0 "${EP[@]}"
for run in $R/*/; do [ -s "$run/outputs.jsonl" ] && $CE label --run "$run" --data-dir "$DATA" > /dev/null; done
for run in insurance_claims synthetic40 pii-sample50 financial_ner-sample200; do
  [ -s $R/$run/outputs.jsonl ] && $CE logprob-scores --run $R/$run
done

# 5b. Cleanlab's TLM as the external anchor (its own venv; the embedded server
#     accepts TLM's json_schema requests) on 12 of the controlled-error claims,
#     the 6 wrong ones and the first 6 right ones (~3 minutes per claim: 4 calls with reasoning);
#     then self-consistency samples for all 30 generated claims
step tlm insurance_claims-controlled20
T=results/tlm_anchor
TLM_IDS=$(printf 'insurance_claims-000%s,' 05 19 20 21 28 29 00 01 02 03 04 06); TLM_IDS=${TLM_IDS%,}
mkdir -p $T/work  # the exported items hold the documents: never committed
$CE export --run $R/insurance_claims-controlled20 --out $T/work/insurance_claims-controlled20.items.jsonl --data-dir "$DATA"
timed $R/insurance_claims-controlled20 env OPENAI_API_KEY=local .venv/bin/python $T/score_with_tlm.py \
  --items $T/work/insurance_claims-controlled20.items.jsonl --out $T/insurance_claims-controlled20.tlm.jsonl \
  --raw $T/work/insurance_claims-controlled20.tlm.raw.jsonl \
  --base-url http://127.0.0.1:${PORT:-8091}/v1 --model qwen2.5-coder-0.5b --ids "$TLM_IDS"
$CE import-scores --run $R/insurance_claims-controlled20 --scores $T/insurance_claims-controlled20.tlm.jsonl --scorer tlm
S=$T/insurance_claims-controlled20-tlm12  # every scorer on the 12 claims TLM scored
rm -rf $S && $CE subset --run $R/insurance_claims-controlled20 --out $S --docs "$TLM_IDS"
$CE combine --run $S --scorers "tlm,reflection,judge-doc[sec:r-s-o|fields:original]:expected,tlm@top,reflection@top"
$CE evaluate --run $S
step consistency: all 30 generated insurance claims
timed $R/insurance_claims $CE generate --run $R/insurance_claims --dataset insurance_claims --data-dir "$DATA" --samples 5 "${EP[@]}"
$CE consistency --run $R/insurance_claims --data-dir "$DATA"
step reflect: the 40 synthetic documents with controlled errors
timed $R/synthetic40-controlled20 $CE reflect --run $R/synthetic40-controlled20 "${EP[@]}"

# 6. judging that waits for the generator runs
step judge insurance_claims-controlled20 fields
timed $R/insurance_claims-controlled20 $CE score --run $R/insurance_claims-controlled20 --mode fields "${J[@]}" "${EP[@]}"
step judge insurance_claims generated doc+fields
timed $R/insurance_claims $CE score --run $R/insurance_claims --mode doc,fields "${J[@]}" "${EP[@]}"
step judge synthetic40-controlled20 doc
timed $R/synthetic40-controlled20 $CE score --run $R/synthetic40-controlled20 --mode doc "${J[@]}" "${EP[@]}"

# 7. analyses written into the run folders (metrics/*.csv|md, figures/*.png), from the stored files
bash construct_eval/studies/analyse_all.sh
step done
