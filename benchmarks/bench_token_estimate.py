"""How far the dry run's token estimate is from the packaged models' own tokenizers.

    .venv/bin/python benchmarks/bench_token_estimate.py [--data-dir ../shared/data/cleanlab] [--prompts 200]

For each dataset: judge prompts (the document rating and every per-leaf rating, the rating
forced, as ``score`` would send them) of outputs with planted errors, at least ``--prompts`` of
them; the estimate (characters / CHARS_PER_TOKEN per message) against the exact token count of
each packaged model's tokenizer (GGUF vocabulary only, no weights) of the same message texts.
The chat template's tokens around each message are not in either count (the estimate adds
MESSAGE_OVERHEAD_TOKENS for them). Prints, side by side in one run, the ratio estimate/exact for
the total (what a bill is made of) and the per-prompt error quantiles. Qwen2.5-Coder 0.5B and
1.5B share one tokenizer, so only the assembled ones are read.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from construct_eval.data.datasets import DatasetError, load_dataset
from construct_eval.data.inject import InjectionConfig, apply_ops, inject_rows
from construct_eval.data.labels import LabelRules
from construct_eval.judging.judge import Judge, JudgeConfig
from construct_eval.llm.client import Endpoint, make_client
from construct_eval.llm.prompt_size import CHARS_PER_TOKEN, estimate_tokens
from construct_eval.serving.models import MODELS, cache_dir
from construct_eval.types import JudgeInput

DATASETS = ("financial_ner", "insurance_claims", "pii", "synthetic")


def prompts(name: str, data_dir: str | None, at_least: int) -> list[str]:
    # the package's prompt: the one the README's numbers were measured with
    ds = load_dataset(name, data_dir=data_dir, n=60, prompt="package")
    rows = inject_rows(ds.records, ds.schema_for, LabelRules.from_dict(ds.label_rules), InjectionConfig(seed=0))
    endpoint = Endpoint("http://127.0.0.1:9/v1", "m", backend="llamacpp")  # never called: prompts only
    judge = Judge(make_client(endpoint, identify_server=False, cache=False), JudgeConfig(
        constrained="grammar", explanation_cap=0, max_tokens=16, granularity="leaf"))  # fmt: skip
    texts: list[str] = []
    for rec, row in zip(ds.records, rows, strict=True):
        item = JudgeInput(rec.id, ds.request_text(rec), ds.schema_for(rec), apply_ops(rec.ground_truth, row["ops"]))
        for task in judge.plan(item, ["doc", "field"]):
            req = judge.request_for(task)
            texts.append("\n".join(str(m.get("content") or "") for m in req.messages))
        if len(texts) >= at_least and rec is not ds.records[-1]:
            break
    return texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[1].parent / "shared/data/cleanlab"))
    ap.add_argument("--prompts", type=int, default=200)
    args = ap.parse_args()
    from llama_cpp import Llama

    tokenizers = {}
    for name, model in MODELS.items():
        path = cache_dir() / "models" / model.filename  # assembled ones only: no download here
        if path.exists():
            tokenizers[name] = Llama(model_path=str(path), vocab_only=True, verbose=False)
    print(f"estimate: {CHARS_PER_TOKEN:g} characters per token; tokenizers: {', '.join(tokenizers)}")
    print(f"{'dataset':18s} {'tokenizer':20s} {'prompts':>7s} {'exact/prompt':>12s} {'estimate/exact (total)':>23s}"
          f" {'per-prompt error p50':>21s} {'p90':>7s}")  # fmt: skip
    for ds_name in DATASETS:
        try:
            texts = prompts(ds_name, args.data_dir, args.prompts)
        except DatasetError as exc:
            print(f"{ds_name:18s} skipped: {exc}")
            continue
        est = np.array([estimate_tokens(t) for t in texts], dtype=float)
        for tok_name, tok in tokenizers.items():
            exact = np.array([len(tok.tokenize(t.encode(), add_bos=False, special=False)) for t in texts], dtype=float)
            err = np.abs(est / exact - 1)
            print(f"{ds_name:18s} {tok_name:20s} {len(texts):7d} {exact.mean():12.0f} {est.sum() / exact.sum():23.3f}"
                  f" {np.median(err):21.1%} {np.quantile(err, 0.9):7.1%}")  # fmt: skip


if __name__ == "__main__":
    main()
