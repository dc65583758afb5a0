"""Asking an LLM judge: prompts and their order variants, the judge (ratings per document and
per field, resume keys), P(correct) verdicts, and scoring a whole run folder."""
