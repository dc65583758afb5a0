"""The scorer registry: every trust score declared once, and everything that lists scorers reads it.

In the spirit of inspect_ai's ``@scorer`` (a scorer registered by name with what it reports), a
trust score is a :class:`ScorerSpec` keyed by its *family*, the first word of every scorer name
of it (:class:`construct_eval.types.ScorerId`): what a reader calls it, its colour and marker, the
run file its rows live in, the levels and granularities it produces, where its cost comes from,
whether it uses the labels, whether it combines other scorers. What derives from it:

- the names ``import-scores`` must refuse (:func:`reserved_families`), so an imported score can
  never overwrite a stage's rows;
- whether a name a user or a file gives fits its declaration (:func:`checked`: a combination lists
  its members, a declared family that combines nothing lists none);
- the figure palette and legend (``analysis/figures.py``), the reader-facing names
  (:func:`construct_eval.scorer_labels.display_name`);
- the cost ledger's sources (``analysis/cost.py``) and the run files a figure's manifest hashes;
- the listing of known scorers (:func:`describe`).

The identity (:class:`ScorerId`) is a value and asks nothing of this registry: what a name says
(a judge's rating, a baseline that uses the labels, a combination) is spelt in the name by the
rules of :mod:`construct_eval.kinds`, and :func:`register` refuses a declaration that breaks them.

Where scorers declare themselves: here, in one declarations block at the end of this module,
not beside each stage. The stages live in four layers (judging, scorers, reports, outside
tools), while their readers sit in the base layer, and a declaration kept beside its stage would
exist only once that stage happened to be imported, so a figure or an import check could miss it
depending on import order. The stages import their family from here instead of
writing the literal. A scorer made elsewhere (a plugin, an outside tool, a test) calls
:func:`register` in its own module: importing that module makes it known to every reader.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from construct_eval.kinds import FAMILY_PATTERN, JUDGE_FAMILIES, USES_LABELS_SUFFIX, JudgeMode, Level
from construct_eval.types import ScorerId

OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
"""Okabe & Ito (2008), colour-blind safe; grey is kept for baselines that use labels."""
BASELINE_GREY = "#999999"
OTHER_COLOUR = OKABE_ITO[3]
"""The colour of a scorer no one declared (an imported score under a new name)."""

JUDGE_PREFIX = "judge-"
"""Kept for judge ratings: a family starting so that is not a judge's is refused."""


@dataclass(frozen=True)
class ScorerSpec:
    """One trust score, declared once.

    ``group`` and ``legend`` name the legend entry a family is drawn under when several share
    it (the three judge modes are one "judge rating" colour; both label-using baselines are
    grey); by default a family is its own entry, labelled ``label``.
    """

    family: str
    label: str  # what a reader sees: "P(correct)", "self-consistency"
    colour: str
    levels: tuple[Level, ...] = (Level.DOCUMENT,)  # document scores, field scores, or both
    granularities: tuple[str, ...] = ()  # which fields its field scores are about: "top", "leaf"
    rows_in: str = "scores"  # the run file (``<rows_in>.jsonl``) its rows are read from
    cost_in: str | None = None  # the run file of the model calls it made; None: no calls of its own
    cost_label: str = ""  # that source's row in the cost ledger
    uses_labels: bool = False  # fitted on the labels: a reference, never a score a user has at run time
    combines: bool = False  # its bracket lists member scorers (``combo:rank-mean[a+b]``), not a prompt variant
    judge_mode: JudgeMode | None = None  # a judge rating: the judgment rows' mode it is made from
    external: bool = False  # made outside construct-eval, brought in by ``import-scores`` (not reserved)
    marker: str | None = None  # None: a marker fixed by the scorer's name (figures.marker)
    group: str | None = None
    legend: str | None = None
    readings: tuple[tuple[str, str], ...] = ()  # a value reading's own label: ("expected", "expected rating")
    made_by: str | None = None  # the command that makes its calls (what ``repair`` names for a lost line)

    def __post_init__(self) -> None:
        if not FAMILY_PATTERN.fullmatch(self.family):
            raise ValueError(f"scorer family {self.family!r} must match {FAMILY_PATTERN.pattern}")
        if not self.levels or any(not isinstance(level, Level) for level in self.levels):
            raise ValueError(f"scorer {self.family!r}: levels must be a non-empty tuple of Level")
        if (Level.FIELD in self.levels) != bool(self.granularities):
            raise ValueError(f"scorer {self.family!r}: field scores need granularities, and only they have any")
        if self.cost_in is not None and not self.cost_label:
            raise ValueError(f"scorer {self.family!r}: a cost source needs its ledger label")
        if JUDGE_FAMILIES.get(self.family) != self.judge_mode:
            raise ValueError(
                f"scorer {self.family!r}: a judge rating's family is its mode's"
                f" ({', '.join(f'{m}: {f}' for f, m in JUDGE_FAMILIES.items())}), and only a judge's is"
            )
        if self.uses_labels != self.family.endswith(USES_LABELS_SUFFIX):
            raise ValueError(
                f"scorer {self.family!r}: a scorer fitted on the labels says so in its name"
                f" (its family ends {USES_LABELS_SUFFIX!r}), and only such a scorer's does"
            )

    def reading_label(self, value: str | None) -> str:
        """The label of one of its readings (``expected``), or its own label."""
        return dict(self.readings).get(value or "", self.label)


_REGISTRY: dict[str, ScorerSpec] = {}


def register(spec: ScorerSpec, *, replace: bool = False) -> ScorerSpec:
    """Declare a scorer; refused if its family is taken (unless ``replace``) or looks like a judge's."""
    if spec.family in _REGISTRY and not replace and _REGISTRY[spec.family] != spec:
        raise ValueError(f"scorer family {spec.family!r} is already registered")
    if spec.family.startswith(JUDGE_PREFIX) and spec.judge_mode is None:
        raise ValueError(f"scorer family {spec.family!r}: the prefix {JUDGE_PREFIX!r} is kept for judge ratings")
    _REGISTRY[spec.family] = spec
    return spec


def unregister(family: str) -> None:
    """Forget a scorer (a test's own, when it is done); built-ins cannot be forgotten."""
    if family in BUILT_IN:
        raise ValueError(f"{family!r} is one of construct-eval's own scorers")
    _REGISTRY.pop(family, None)


def spec_for(family: str) -> ScorerSpec | None:
    """The declaration of ``family``, or None for a scorer no one declared."""
    return _REGISTRY.get(family)


def specs() -> tuple[ScorerSpec, ...]:
    """Every declared scorer, in the order declared."""
    return tuple(_REGISTRY.values())


def checked(scorer: ScorerId | str) -> ScorerId:
    """The identity of a scorer name (or the identity itself) where a name enters the package (the
    CLI, a run file, a saved policy), refused, saying why, if it breaks the grammar or its family's
    declaration: a declared combination must list the scorers it combines, and a declared family
    that combines nothing lists none. A family no one declared passes (an imported score)."""
    sid = ScorerId.of(scorer)
    spec = spec_for(sid.family)
    if spec is not None and spec.combines != sid.is_combination:
        want = "lists the scorers it combines in brackets" if spec.combines else "combines no scorers (no brackets)"
        raise ValueError(f"scorer name {sid.name!r}: {spec.label!r} ({sid.family}) {want}")
    return sid


def reserved_families() -> tuple[str, ...]:
    """Families of construct-eval's own stages: an imported score may not take one of these names."""
    return tuple(s.family for s in _REGISTRY.values() if not s.external)


def cost_sources() -> list[tuple[str, str, bool]]:
    """(run file, ledger label, judged per configuration) of every scorer that makes model calls,
    each file once, in the order declared."""
    seen: dict[str, tuple[str, str, bool]] = {}
    for s in _REGISTRY.values():
        if s.cost_in is not None and s.cost_in not in seen:
            seen[s.cost_in] = (s.cost_in, s.cost_label, s.judge_mode is not None)
    return list(seen.values())


def made_by(run_file: str) -> str | None:
    """The command that remakes a model-calling scorer's calls file, or None if no scorer says."""
    return next((s.made_by for s in _REGISTRY.values() if s.cost_in == run_file and s.made_by), None)


def run_files() -> tuple[str, ...]:
    """The run files scorers' rows and costs are read from (``judgments``, ``scores``, ...), each once."""
    names = [s.rows_in for s in _REGISTRY.values()] + [s.cost_in for s in _REGISTRY.values() if s.cost_in]
    return tuple(dict.fromkeys(names))


def describe(families: Iterable[str] | None = None) -> list[str]:
    """One line per declared scorer: family, label, levels and granularities, rows, cost, labels."""
    lines = []
    for s in specs() if families is None else [x for f in families if (x := spec_for(f))]:
        where = ", ".join(level.value for level in s.levels)
        if s.granularities:
            where += f" ({'/'.join(s.granularities)})"
        cost = f"calls in {s.cost_in}.jsonl" if s.cost_in else "no calls of its own"
        notes = [n for n, on in (("uses labels", s.uses_labels), ("imported", s.external)) if on]
        lines.append(
            f"{s.family}: {s.label}; {where}; rows in {s.rows_in}.jsonl; {cost}" + "".join(f"; {n}" for n in notes)
        )
    return lines


# --------------------------------------------------------------------------- the built-in scorers
# Declared in this order, which is also the cost ledger's order of sources after generation.

_DOC, _FIELDS = (Level.DOCUMENT,), (Level.FIELD, Level.DOCUMENT)
_EXPECTED = (("expected", "expected rating"),)
_JUDGE = {"colour": OKABE_ITO[4], "group": "judge", "legend": "judge rating", "rows_in": "judgments"}
_JUDGE_COST = {"cost_in": "judgments", "cost_label": "judge", "readings": _EXPECTED}

TOKEN_LOGPROB = register(
    ScorerSpec("token_logprob", "token log-probs", OKABE_ITO[5], _FIELDS, ("leaf", "top"))
)  # read from the generation's own log-probs: no calls of its own
CONSISTENCY = register(
    ScorerSpec(
        "consistency", "self-consistency", OKABE_ITO[2], _FIELDS, ("leaf", "top"),
        cost_in="samples", cost_label="generator samples",
    )
)  # fmt: skip
JUDGE_DOC = register(ScorerSpec("judge-doc", "judge rating", **_JUDGE, **_JUDGE_COST, judge_mode=JudgeMode.DOC))
JUDGE_FIELD = register(
    ScorerSpec(
        "judge-field", "judge rating", **_JUDGE, **_JUDGE_COST, levels=_FIELDS, granularities=("top", "leaf"),
        judge_mode=JudgeMode.FIELD,
    )
)  # fmt: skip
JUDGE_JOINT = register(
    ScorerSpec(
        "judge-joint", "judge rating", **_JUDGE, **_JUDGE_COST, levels=_FIELDS,
        granularities=("top", "leaf"), judge_mode=JudgeMode.FIELDS_JOINT,
    )
)  # fmt: skip
REFLECTION = register(
    ScorerSpec(
        "reflection", "reflection ensemble", OKABE_ITO[6], _FIELDS, ("top", "leaf"),
        cost_in="reflections", cost_label="reflection", marker="p", made_by="reflect",
    )
)  # fmt: skip
CONSTRUCT = register(
    ScorerSpec(
        "construct", "CONSTRUCT (authors' TLM)", OKABE_ITO[6], _FIELDS, ("top",),
        rows_in="scores", cost_in="construct", cost_label="CONSTRUCT", marker="*", made_by="construct",
    )
)  # fmt: skip  # the paper's method as trustworthy-llm 0.0.3 computes it (scorers/construct.py)
CONSTRUCT_GEN = register(
    ScorerSpec(
        "construct-gen", "CONSTRUCT with the generator's samples", OKABE_ITO[6], _DOC, marker="X",
    )
)  # fmt: skip  # the same reflections, with the generator's samples and token probability as TLM's other parts
P_CORRECT = register(
    ScorerSpec(
        "p-correct",
        "P(correct)",
        OKABE_ITO[0],
        _FIELDS,
        ("top", "leaf"),
        cost_in="verdicts",
        cost_label="verdicts",
        made_by="verdict",
    )
)
TLM = register(
    ScorerSpec(
        "tlm", "Cleanlab TLM (imported scores)", OKABE_ITO[1], _FIELDS, ("top", "leaf"), external=True, marker="H"
    )
)
CONTACT_RULE = register(
    ScorerSpec("contact_rule", "contact rule (knows the templates)", "#4D4D4D", external=True, marker="P")
)  # a ceiling for the shipping notices, imported by construct_eval.studies.contact_rule: written knowing the templates
COMBO = register(ScorerSpec("combo", "rank-mean combination", OKABE_ITO[7], _FIELDS, ("top", "leaf"), combines=True))
PLAUSIBILITY = register(
    ScorerSpec(
        "plausibility", "plausibility checks (built for the planted kinds)", "#8C564B", _FIELDS, ("leaf", "top"),
        rows_in="plausibility",
    )
)  # fmt: skip  # no labels, no calls: whether a value is in the document and has its type's shape
_BASELINE = {"colour": BASELINE_GREY, "group": "baseline", "legend": "uses labels (baseline)", "uses_labels": True}
FIELD_PRIOR = register(
    ScorerSpec(
        "field-prior-uses-labels", "field prior (uses labels)", levels=(Level.FIELD,), granularities=("top", "leaf"),
        rows_in="labels", **_BASELINE,
    )
)  # fmt: skip
FITTED = register(
    ScorerSpec(
        "fitted-oof-uses-labels", "fitted combiner (uses labels)", levels=_FIELDS, granularities=("top", "leaf"),
        combines=True, **_BASELINE,
    )
)  # fmt: skip

BUILT_IN = frozenset(_REGISTRY)
"""The families declared above."""
