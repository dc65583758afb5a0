#!/usr/bin/env bash
# The paper set: every recorded run with stored tables (results/runs/*, after analyse_all.sh),
# NeurIPS full text width. No model calls; the manifest says which run files (hashes) it read.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=()
left_out=$(grep -o '^[^# ]*' results/figures/left_out.txt | grep . || true)  # runs kept out of the paper set, and why
for r in results/runs/*/; do
  [ -s "$r/metrics/detection.csv" ] && ! grep -qxF "$(basename "$r")" <<< "$left_out" && runs+=("${r%/}")
done
rm -f results/figures/{,one_column/}*.{pdf,svg,png,csv,tex} results/figures/{,one_column/}{manifest.json,figures.md}
${PYTHON:-.venv/bin/python} -m construct_eval.cli figures --runs "${runs[@]}" --out results/figures --venue neurips \
  --command-line "bash results/figures/make.sh"
# The main figures again at one column's width (ICML, 3.25 in), for a two-column paper.
${PYTHON:-.venv/bin/python} -m construct_eval.cli figures --runs "${runs[@]}" --out results/figures/one_column --venue icml \
  --column half --main-only --command-line "bash results/figures/make.sh"
