"""Talking to OpenAI-compatible endpoints: the client with its cache and retries, token log-probs,
prompt-size budgets, and the bounded-queue engine every stage runs its calls on.

The names of the former ``construct_eval.llm`` module (``Endpoint``, ``LLMClient``,
``make_client``, ...) are re-exported here, so old imports keep working.
"""

from construct_eval.llm.client import *  # noqa: F403
