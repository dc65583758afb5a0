"""Trust scores beyond one rating: the generator's token log-probs, per-field self-consistency,
the reflection ensemble, rank combinations, and scores made elsewhere (external, e.g. TLM)."""
