"""CONSTRUCT's structured-output reflection prompts, as the authors' open-source code words them.

The text of each prompt is that of Cleanlab's ``trustworthy-llm`` 0.0.3 (Apache-2.0,
https://github.com/cleanlab/tlm), file ``tlm/templates/reflection_completion_templates.py``
(the classes named beside each constant), and the consistency explanation that of
``tlm/utils/explainability_utils.py``. They are restated here rather than imported because
importing any TLM template imports litellm (``tlm/types/completion_template.py``), whose
dependencies conflict with this package's lock (``results/tlm_anchor/README.md``).
``tests/test_construct_equivalence.py`` runs TLM itself and checks that every request built from
these texts is the one TLM sends.

Placeholders are ``str.format`` fields, as in TLM: ``{question}`` (the user request),
``{answer}`` (the output, as a JSON string) and ``{max_explanation_words}``.
"""

from __future__ import annotations

FIELD_ACCURACY_PROMPT = (  # SelfReflectionSOFieldAccuracyConfig._PROMPT
    "You are an evaluator that identifies factual inaccuracies in AI responses.\n"
    "Below is a User Request and the Response provided by an untrustworthy AI Assistant.\n"
    "Your task is to find and list any fields in the Response that are factually incorrect, incomplete, or unreliable.\n"
    "\n"
    "<request>\n"
    "{question}\n"
    "</request>\n"
    "\n"
    "<response>\n"
    "{answer}\n"
    "</response>\n"
    "\n"
    "\n"
    "## Instructions\n"
    "\n"
    "Carefully evaluate the factual accuracy of each top-level field in the JSON Response.\n"
    "You must identify any fields that are likely incorrect, incomplete, unverifiable, or misleading.\n"
    "\n"
    "Be extremely strict in your judgment:\n"
    "- Treat any missing or partially correct information as potentially incorrect.\n"
    "- Penalize any unsupported assumptions, factual errors, or extraneous content.\n"
    "- Incomplete fields should be marked as incorrect. Do not excuse missing data, if a field is null/empty when it should contain information, it is incorrect.\n"
    "- Even small inaccuracies should cause a field to be flagged as untrustworthy.\n"
    "\n"
    "## Output Format\n"
    "\n"
    "Output a JSON object with three fields:\n"
    '1. "explanation": Briefly describe how you evaluated the response, what issues you found, and why certain fields were marked incorrect.\n'
    '2. "incorrect_fields": An array of objects containing ONLY the fields that are potentially incorrect. Each object has:\n'
    '   - "field_name": The name of the incorrect field\n'
    '   - "explanation": A brief explanation of why this field is incorrect\n'
    "   If all fields appear accurate and trustworthy, output an empty array ([]).\n"
    '3. "confidence_score": A score between 0 and 100 indicating your confidence in the overall correctness of the response. If you identify any incorrect, incomplete, or unverifiable fields, the score should be very low. Only assign a high score if every field is fully accurate and trustworthy.\n'
    "\n"
    "Think through your evaluation systematically and provide clear reasoning for your decisions."
)

KNOWLEDGE_GAP_PROMPT = (  # SelfReflectionSOFieldKnowledgeGapConfig._PROMPT
    "Below is a User Request and the proposed Response from an untrustworthy AI assistant:\n"
    "\n"
    "<request>\n"
    "{question}\n"
    "</request>\n"
    "\n"
    "<response>\n"
    "{answer}\n"
    "</response>\n"
    "\n"
    "\n"
    "How can I be sure each field in this response is correct?\n"
    "\n"
    "Please provide a detailed, field-by-field evaluation of the proposed Response.\n"
    "\n"
    "For each top-level field:\n"
    "- Describe the evidence supporting the field’s content.\n"
    "- Assess the reliability of that evidence and explain why it can or cannot be trusted.\n"
    "- Identify any weaknesses: note if the field appears incorrect, incomplete, misleading, or unverifiable.\n"
    "\n"
    "Work step by step: systematically check each field for factual accuracy and completeness, then summarize your findings.\n"
    "\n"
    "This field-level evaluation should directly guide your overall confidence rating — the more issues you find, the lower the rating should be.\n"
    "Now rate your confidence on a scale of 0–10 that the response is correct.\n"
    "\n"
    "\n"
    "## Output Format\n"
    "\n"
    "Output a JSON object with three fields:\n"
    '1. "explanation": Briefly describe how you evaluated the response, what issues you found, and why certain fields were marked incorrect.\n'
    '2. "incorrect_fields": An array of objects containing ONLY the fields that are potentially incorrect. Each object has:\n'
    '   - "field_name": The name of the incorrect field\n'
    '   - "explanation": A brief explanation of why this field is incorrect\n'
    "   If all fields appear accurate and trustworthy, output an empty array ([]).\n"
    '3. "rating": A rating between 0 and 10. If you identify any incorrect, incomplete, or unverifiable fields, the rating should be very low. Only assign a high rating if every field is fully accurate and trustworthy.'
)

ARGUMENT_PROMPT = (  # ReflectionArgumentTemplate._PROMPT_TEMPLATE (no reasoning)
    "Below is a User Request and the proposed Answer from an untrustworthy AI assistant:\n"
    "\n"
    "<request>\n"
    "{question}\n"
    "</request>\n"
    "\n"
    "<answer>\n"
    "{answer}\n"
    "</answer>\n"
    "\n"
    "\n"
    "# Instructions\n"
    "\n"
    "Think critically to provide a comprehensive veritable argument for why the proposed Answer might be incorrect.\n"
    "\n"
    "Then consider the argument, consider the Answer again, and determine: How certain are you that the proposed Answer is correct?\n"
    "\n"
    "Provide a score between 0-100 indicating your confidence that the Answer is correct and factually accurate.\n"
    "If the proposed Answer is obviously incorrect, then rate a score of 0.\n"
    "\n"
    "Your output should strictly use the following template:\n"
    "\n"
    "<score>\n"
    "[choose a confidence score between 0-100]\n"
    "</score>"
)

ARGUMENT_PROMPT_WITH_REASONING = (  # ReflectionArgumentTemplate._PROMPT_TEMPLATE_WITH_REASONING
    "Below is a User Request and the proposed Answer from an untrustworthy AI assistant:\n"
    "\n"
    "<request>\n"
    "{question}\n"
    "</request>\n"
    "\n"
    "<answer>\n"
    "{answer}\n"
    "</answer>\n"
    "\n"
    "\n"
    "# Instructions\n"
    "\n"
    "Think critically to provide a comprehensive veritable argument for why the proposed Answer might be incorrect.\n"
    "\n"
    "Then consider the argument, consider the Answer again, and determine: How certain are you that the proposed Answer is correct?\n"
    "\n"
    "Provide a score between 0-100 indicating your confidence that the Answer is correct and factually accurate.\n"
    "If the proposed Answer is obviously incorrect, then rate a score of 0.\n"
    "\n"
    "Your output should strictly use the following template:\n"
    "\n"
    "<think>\n"
    "[argue why the proposed Answer might be incorrect (no more than {max_explanation_words} words)]\n"
    "</think>\n"
    "\n"
    "<score>\n"
    "[choose a confidence score between 0-100]\n"
    "</score>"
)

PER_FIELD_CORRECTNESS_PROMPT = (  # ReflectionSOPerScoreCorrectnessTemplate._PROMPT
    "Below is a User Request and the proposed Response from an untrustworthy AI assistant.\n"
    "Your task is to double-check the accuracy of each field in the Response JSON.\n"
    "\n"
    "<request>\n"
    "{question}\n"
    "</request>\n"
    "\n"
    "<response>\n"
    "{answer}\n"
    "</response>\n"
    "\n"
    "\n"
    "## Instructions\n"
    "\n"
    "For each top-level key in the JSON:\n"
    "Consider whether its value in the proposed JSON Response above seems: potentially incorrect, hard for you to verify based on available information, or missing when it shouldn't be.\n"
    "Then decide how confident you are that its value is actually correct, choosing one confidence rating out of these choices:\n"
    "- Certain\n"
    "- Mostly Certain\n"
    "- Somewhat Certain\n"
    "- Uncertain\n"
    "- Likely Incorrect\n"
    "\n"
    "\n"
    "## Output Format\n"
    "\n"
    "Output a JSON object with the same top-level keys as the proposed JSON Response.\n"
    "Each top-level key should map to an object with two fields:\n"
    "- `explanation`: Briefly explain why the value in the proposed JSON Response could be incorrect, incomplete, difficult to verify, or why you are certain it is right\n"
    "- `confidence`: One choice out of: [Certain, Mostly Certain, Somewhat Certain, Uncertain, Likely Incorrect]"
)

PER_FIELD_CERTAINTY_PROMPT = (  # ReflectionSOPerScoreCertaintyTemplate._PROMPT
    "You are a trustworthy verifier of AI-generated JSON responses.\n"
    "Below is a User Request and the proposed JSON Response from an untrustworthy AI assistant.\n"
    "Your task is to double check whether each field in the proposed JSON Response is correct.\n"
    "\n"
    "<request>\n"
    "{question}\n"
    "</request>\n"
    "\n"
    "<response>\n"
    "{answer}\n"
    "</response>\n"
    "\n"
    "\n"
    "## Instructions\n"
    "\n"
    "Help me determine how much I can trust the value of each field in the proposed JSON Response.\n"
    "It is crucial that you help me catch any inaccurate values.\n"
    "\n"
    "For each top-level key in the proposed JSON Response:\n"
    "- How certain are you that its value in the proposed JSON Response is entirely correct?\n"
    "- Provide a score between 0-100 for this key, indicating your confidence that its value is correct and fully accurate.\n"
    "- If the value is obviously incorrect, then assign a score of 0 to this key.\n"
    "\n"
    "Be strict when scoring:\n"
    "- Do NOT give high scores for partially correct values, incomplete information, values which are missing but should not be, or content that should not be there.\n"
    "- If you cannot verify the accuracy of a value, then your corresponding score should never exceed 50.\n"
    "- Only assign high scores if this field in the proposed JSON Response is fully correct and complete.\n"
    "- Any issue you identify or verification uncertainty should reduce your score.\n"
    "\n"
    "## Output Format\n"
    "\n"
    "Output a JSON object with the same top-level keys as the proposed JSON Response.\n"
    "Each top-level key should map to an object with two fields:\n"
    "- `explanation`: argue why the value in the proposed JSON Response might be incorrect\n"
    "- `score`: confidence score between 0-100"
)

CONSISTENCY_EXPLANATION = (  # explainability_utils.OBSERVED_CONSISTENCY_EXPLANATION_TEMPLATE
    "This response is untrustworthy due to lack of consistency in possible responses from the model. Here's one inconsistent alternate response that the model considered (which may not be accurate either): \n"
    "{observed_consistency_completion}"
)

RESPONSE_FORMAT_PROMPT = "\n\n## Response Format\n\nThe response must follow this JSON schema:\n\n<json_schema>\n{response_format}\n</json_schema>\n"
"""``tlm/utils/prompt_utils.py``, ``get_response_format_prompt``: the schema appended to the request."""
