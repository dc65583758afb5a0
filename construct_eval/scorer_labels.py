"""What a reader sees for a scorer: the one source of every scorer label a table, a figure or a
notebook shows (:func:`display_name`, its reader's and its figure's form), of prompt orders in
words (:func:`variant_label`) and of elicitations (:func:`elicitation_label`). A family's own
words come from the scorer registry; what differs from the default is read from the identity
(:class:`~construct_eval.types.ScorerId`), never from the string.
"""

from __future__ import annotations

from construct_eval.kinds import JudgeMode, Level
from construct_eval.scorer_registry import spec_for
from construct_eval.types import ScorerId

ELICITATION_LABELS = {"none": "free", "grammar:rating-only": "forced", "grammar": "grammar", "json": "JSON schema"}
"""What a reader calls an elicitation (a judgment row's ``constrained``); ``grammar:capN`` reads
"explanation capped at N"."""


def elicitation_label(constrained: str) -> str:
    """The reader's word for how a rating was asked for: ``forced``, ``free``, ..."""
    if constrained.startswith("grammar:cap"):
        return f"explanation capped at {constrained.removeprefix('grammar:cap')}"
    return ELICITATION_LABELS.get(constrained, constrained)


# --------------------------------------------------------------------------- what a reader sees

SECTION_WORDS = {"r": "document", "s": "schema", "o": "output"}
"""A prompt section in a reader's words: the request section is the user's request with the document
to process (``judging.prompts``), so a reader meets it as the document."""
_DEFAULT_SECTIONS = "r-s-o"


def _variant_words(variant: str) -> tuple[str | None, list[str]]:
    """(the elicitation a variant's ``ask:`` tag names, the ways its prompt differs from the default)."""
    asked, words = None, []
    for part in variant.split("|"):
        key, _, value = part.partition(":")
        if key == "ask":
            asked = "none" if value == "free" else value
        elif key == "sec" and value != _DEFAULT_SECTIONS:
            order = [SECTION_WORDS.get(s, s) for s in value.split("-")]
            default = [SECTION_WORDS[s] for s in _DEFAULT_SECTIONS.split("-")]
            words.append(f"{order[0]} first" if order[0] != default[0] else f"{order[1]} before {order[2]}")
        elif key == "fields" and value != "original":
            seed = value.removeprefix("shuffled")
            words.append(f"fields shuffled (seed {seed or 0})" if value.startswith("shuffled") else f"fields {value}")
        elif key == "target":
            words.append(f"rated field {value}")
        elif key not in ("sec", "fields"):
            words.append(part)
    return asked, words


def _fields_word(granularity: str) -> str:
    return {"leaf": "leaf fields", "top": "top-level fields"}.get(granularity, f"{granularity} fields")


def display_name(
    scorer: ScorerId | str, *, elicitation: str | None = None, short: bool = False, granularity: bool = False
) -> str:
    """What a reader sees for a scorer: the one source of every scorer label a table, a figure or a
    notebook shows (the family's words come from the scorer registry).

    The reader's form (the default) says what differs from the default in words: ``judge rating
    (forced), fields reversed``, ``expected rating (free), output first``, ``rank-mean
    combination of 2 scores, per field: judge rating (forced); expected rating (forced)``,
    ``self-consistency, least over fields``.
    ``elicitation`` is how the run's own ratings were asked for (a judgment row's
    ``constrained``); a variant's ``ask:`` tag overrides it. No internal identifier is shown and
    nothing is cut.

    ``short=True`` is a figure's form, short enough for a legend or a row label: ``judge rating
    (forced)``, ``expected rating, output first``, ``lowest field expected rating``, ``P(correct)``,
    ``rank mean of 2 scores``, ``field prior (uses labels)``; ``granularity`` adds which fields are
    the items (``per leaf``), for tables that hold both granularities. A name that does not parse
    is shown as it is.
    """
    if short:
        return _figure_name(scorer, granularity=granularity)
    if granularity:
        raise ValueError("granularity= is for the short form (short=True)")
    return _reader_name(scorer, elicitation)


def _reader_name(scorer: ScorerId | str, elicitation: str | None) -> str:
    """The long form of :func:`display_name`: its family's label and what differs from the default, in words.

    ``judge rating (forced), fields reversed``, ``expected rating (free), output first``,
    ``rank-mean combination of 2 scores, per field: judge rating (forced); expected rating
    (forced)``, ``self-consistency, least over fields``.
    ``elicitation`` is how the run's own ratings were asked for (a judgment row's
    ``constrained``); a variant's ``ask:`` tag overrides it. No internal identifier is shown and
    nothing is cut: a figure that needs shorter labels chooses what to leave out.
    """
    sid = ScorerId.of(scorer)
    spec = spec_for(sid.family)
    head = spec.reading_label(sid.value) if spec is not None else sid.family
    if spec is None and sid.value:
        head += f" ({sid.value})"
    if sid.members:
        return _combination_words(head, [_reader_name(m, elicitation) for m in sid.members], sid.aggregate)
    words: list[str] = []
    asked = elicitation
    if sid.variant:
        tagged, words = _variant_words(sid.variant)
        asked = tagged or asked
    if asked and sid.is_judge:
        head += f" ({elicitation_label(asked)})"
    if sid.members:
        head += f" of {len(sid.members)} scores"
    if sid.judge_mode is JudgeMode.FIELDS_JOINT:
        words.insert(0, "fields rated in one call")
    if sid.level is Level.FIELD:
        words.insert(0, _fields_word(sid.granularity) if sid.granularity or not sid.is_judge else "per field")
    if sid.aggregate is not None:
        over = _fields_word(sid.granularity) if sid.granularity else "fields"
        words.insert(0, f"{'least' if sid.aggregate == 'min' else 'mean'} over {over}")
    return ", ".join([head, *words])


def _combination_words(head: str, members: list[str], aggregate: str | None) -> str:
    """A combination named by what it combines, one member per ``;`` (a member's own words are
    separated by commas), the words every member shares said once after the count:
    ``rank-mean combination of 2 scores, per field: judge rating (forced); expected rating (forced)``."""
    parts = [m.split(", ") for m in members]
    shared = 0  # how many trailing words all members share, each keeping its head
    while all(len(p) > shared + 1 for p in parts) and len({tuple(p[-(shared + 1) :]) for p in parts}) == 1:
        shared += 1
    suffix = parts[0][len(parts[0]) - shared :] if shared else []
    if aggregate is not None:
        suffix.insert(0, f"{'least' if aggregate == 'min' else 'mean'} over fields")
    own = [", ".join(p[: len(p) - shared]) for p in parts]
    return f"{head} of {len(members)} scores" + "".join(f", {w}" for w in suffix) + ": " + "; ".join(own)


DEFAULT_ORDER_PARTS = frozenset({"sec:r-s-o", "fields:original"})
"""The default prompt order as a variant's parts: the document (the request), then the schema, then the output,
fields as extracted."""


def in_default_order(variant: str | None, *, asks: tuple[str, ...] = ("free",)) -> bool:
    """Whether a judge variant is the default prompt order (no variant at all, or exactly
    ``sec:r-s-o|fields:original``), asked the forced way or one of ``asks`` (``ask:free`` by
    default); another order, or another elicitation (``ask:json``), is not.

    >>> in_default_order(None), in_default_order("sec:r-s-o|fields:original|ask:free")
    (True, True)
    >>> in_default_order("sec:o-s-r|fields:original"), in_default_order("sec:r-s-o|fields:original|ask:json")
    (False, False)
    """
    if not variant:
        return True
    parts = set(variant.split("|"))
    parts -= {f"ask:{a}" for a in asks}
    return parts == DEFAULT_ORDER_PARTS


def variant_label(variant: str, *, short: bool = False) -> str:
    """A prompt order in a reader's words: ``output first``, ``fields reversed``, or ``default order``
    (the document, then the schema, then the output, fields as extracted). ``short=True``: a
    figure's words (``fields shuffled`` without its seed; elicitation tags left out)."""
    if short:
        return short_order(variant)[0] or "default order"
    _, words = _variant_words(variant)
    return ", ".join(words) or "default order"


# --------------------------------------------------------------------------- what a figure shows

_SHORT_ORDER_WORDS = {"reversed": "fields reversed", "o-s-r": "output first", "shuffled1": "fields shuffled"}
_SHORT_GRANULARITY_WORDS = {"leaf": "per leaf", "top": "per top field"}


def _asked(variant: str | None) -> str | None:
    """A variant's ``ask:`` elicitation other than ``free`` (``json``), or None."""
    for part in (variant or "").split("|"):
        key, _, value = part.partition(":")
        if key == "ask" and value != "free":
            return value
    return None


def short_order(variant: str | None) -> tuple[str | None, bool]:
    """(a judge's prompt order in a figure's words, or None for the default order; asked the free
    way): ``sec:o-s-r|fields:original|ask:free`` -> ("output first", True)."""
    if not variant:
        return None, False
    free, order = False, None
    for part in variant.split("|"):
        key, _, value = part.partition(":")
        if key == "ask":
            free = value == "free"
        elif part not in ("sec:r-s-o", "fields:original"):
            order = _SHORT_ORDER_WORDS.get(value, value)
    return order, free


def _figure_name(scorer: ScorerId | str, *, granularity: bool = False) -> str:
    """The short form of :func:`display_name` (a figure's legend and row labels)."""
    if isinstance(scorer, ScorerId):
        sid = scorer
    else:
        try:
            sid = ScorerId.parse(scorer)
        except ValueError:
            return str(scorer)
    if sid.is_combination:
        n = len(sid.members)
        text = f"fitted combination of {n} (uses labels)" if sid.uses_labels else f"rank mean of {n} scores"
    elif sid.is_judge:
        order, free = short_order(sid.variant)
        asked = _asked(sid.variant)  # another elicitation than free or forced: named as it is
        how = "free" if free else elicitation_label(asked) if asked else "forced"
        if sid.value == "expected":
            text = "expected rating" + (f" ({how})" if how != "forced" else "")
        else:
            text = f"judge rating ({how})"
        if sid.judge_mode is JudgeMode.FIELDS_JOINT:
            text += ", one call"
        if sid.aggregate:
            noun = text.replace("judge rating", "rating").replace(" (forced)", "")
            text = ("lowest field " if sid.aggregate == "min" else "mean field ") + noun
        if order:
            text += f", {order}"
    else:
        spec = spec_for(sid.family)
        text = spec.label if spec is not None else sid.family
        if sid.value:
            text += f" ({sid.value})"
        if sid.aggregate:
            text += f" ({'lowest field' if sid.aggregate == 'min' else 'mean of fields'})"
    if granularity and sid.granularity:
        text += f", {_SHORT_GRANULARITY_WORDS.get(sid.granularity, sid.granularity)}"
    return text
