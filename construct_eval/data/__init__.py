"""Documents and what is stored about them: datasets, run folders (append-only JSONL), outputs
made by a generator or with planted errors, and the true per-field error labels."""
