"""Controlled errors: outputs made from the ground truth with realistic mistakes planted at a chosen rate.

Small local generators get nearly every document wrong, which makes document-level
detection degenerate; the paper studies strong generators whose errors are sporadic. This
module makes that second kind of output on any dataset: a chosen share of documents gets
one to a few errors, of the kinds generators really make:

- ``other_value``: a value taken from elsewhere in the document (the other date, the other
  party, a look-alike identifier or amount);
- ``digit_slip``: one digit changed or two neighbouring digits swapped;
- ``format_change``: a date or number written in a format the comparison rules count as wrong;
- ``invented_value``: a value where the truth is null;
- ``item_dropped`` / ``item_duplicated``: a list item left out or repeated;
- ``enum_swap``: another value of an enum.

With near misses on (``InjectionConfig.near_miss_share``, new runs only), digit slips and
format changes also apply inside strings and string-list items, three more kinds exist
(``span_cut``, ``span_extended``, ``neighbour_type``: :mod:`construct_eval.data.near_miss`),
and each error is drawn from the near-miss kinds with that probability (from the others
otherwise, and from whichever group a document still offers when one runs out). A config
without it plants exactly what it planted before near misses existed, byte for byte.

Every planted error is checked with :mod:`construct_eval.data.labels` before it is kept, so the
labels known by construction and the labels the rules derive agree. An output is stored as
the list of operations applied to the ground truth (:func:`apply_ops`), so a run made from
third-party data can be committed without copying that data.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from construct_eval.data.labels import LabelRules, compare_values, label_output, parse_date
from construct_eval.data.near_miss import NEAR_MISS_KINDS, NEW_KINDS, list_candidates, string_candidates
from construct_eval.fields import FieldPath, format_path, get_at, parse_path, resolve_schema, schema_at

ERROR_KINDS = (
    "other_value",
    "digit_slip",
    "format_change",
    "invented_value",
    "item_dropped",
    "item_duplicated",
    "enum_swap",
)
"""The first kinds (every run recorded before near misses; the default of a config without them)."""

ALL_KINDS = ERROR_KINDS + NEW_KINDS
"""Every kind; :data:`construct_eval.data.near_miss.NEW_KINDS` need near misses on."""

NEAR_MISS_DEFAULT_SHARE = 0.5
"""The near-miss share of new near-miss runs (``construct-eval inject --near-miss-share``): with
it at least a third of the planted errors are near misses on every packaged dataset."""


@dataclass(frozen=True)
class InjectionConfig:
    doc_error_rate: float = 0.2  # share of documents that get errors (exact, rounded)
    min_errors: int = 1  # errors per wrong document, uniform in [min_errors, max_errors]
    max_errors: int = 3
    kinds: tuple[str, ...] = ERROR_KINDS
    seed: int = 0
    near_miss_share: float | None = None  # None: the first kinds only, as every run recorded before them

    def __post_init__(self) -> None:
        if not 0 <= self.doc_error_rate <= 1:
            raise ValueError("doc_error_rate must be in [0, 1]")
        if not 1 <= self.min_errors <= self.max_errors:
            raise ValueError("need 1 <= min_errors <= max_errors")
        unknown = set(self.kinds) - set(ALL_KINDS)
        if unknown:
            raise ValueError(f"unknown error kind(s) {sorted(unknown)}; choose from {ALL_KINDS}")
        if self.near_miss_share is None:
            needs = sorted(set(self.kinds) & set(NEW_KINDS))
            if needs:
                raise ValueError(f"error kind(s) {needs} need near misses on (a near_miss_share)")
        elif not 0 <= self.near_miss_share <= 1:
            raise ValueError("near_miss_share must be in [0, 1]")

    def signature(self) -> dict[str, Any]:
        sig: dict[str, Any] = {
            "doc_error_rate": self.doc_error_rate,
            "min_errors": self.min_errors,
            "max_errors": self.max_errors,
            "kinds": list(self.kinds),
            "seed": self.seed,
        }
        if self.near_miss_share is not None:  # a config without near misses reads as it always did
            sig["near_miss_share"] = self.near_miss_share
            sig["near_miss_kinds"] = [k for k in self.kinds if k in NEAR_MISS_KINDS]
        return sig

    @classmethod
    def from_signature(cls, sig: Mapping[str, Any]) -> InjectionConfig:
        """The config a run.json records (``generator.config``)."""
        return cls(
            doc_error_rate=sig["doc_error_rate"],
            min_errors=sig["min_errors"],
            max_errors=sig["max_errors"],
            kinds=tuple(sig["kinds"]),
            seed=sig["seed"],
            near_miss_share=sig.get("near_miss_share"),
        )


# --------------------------------------------------------------------------- replay


def apply_ops(truth: Any, ops: Sequence[Mapping[str, Any]]) -> Any:
    """The output: ``truth`` with the operations applied in order (``set``, ``drop``, ``duplicate``)."""
    doc = copy.deepcopy(truth)
    for op in ops:
        path = parse_path(op["path"])
        parent = get_at(doc, path[:-1]) if len(path) > 1 else doc
        last = path[-1]
        if op["op"] == "set":
            parent[last] = copy.deepcopy(op["value"])
        elif op["op"] == "drop":
            del parent[last]
        elif op["op"] == "duplicate":
            parent.insert(last + 1, copy.deepcopy(parent[last]))
        else:
            raise ValueError(f"unknown operation {op['op']!r}")
    return doc


# --------------------------------------------------------------------------- candidates

_DATE_PATTERNS = (
    r"\b\d{4}-\d{2}-\d{2}\b",
    r"\b\d{1,2}\.\d{1,2}\.\d{4}\b",
    r"\b\d{1,2}/\d{1,2}/\d{4}\b",
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b",
    r"\b\d{1,2}\s+(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+\d{4}\b",
)
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])\d+(?:\.\d+)?")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def dates_in(text: str) -> list[str]:
    """Every date the text writes (the formats of ``_DATE_PATTERNS``), as ISO strings."""
    found = []
    for pattern in _DATE_PATTERNS:
        for m in re.finditer(pattern, text):
            d = parse_date(re.sub(r"(\d)(st|nd|rd|th)", r"\1", m.group(0)).replace(",", ", ").replace(",  ", ", "))
            if d is not None:
                found.append(d.isoformat())
    return found


def _numbers_in(text: str) -> list[float]:
    out = []
    for m in _NUMBER.finditer(text):
        try:
            out.append(float(m.group(0).replace(",", "")))
        except ValueError:
            continue
    return out


def _shape_pattern(value: str) -> re.Pattern[str] | None:
    """A regex for strings shaped like ``value`` (digits vary, the rest is kept)."""
    if not any(c.isdigit() for c in value) or len(value) < 4:
        return None
    parts = []
    for c in value:
        parts.append(r"\d" if c.isdigit() else re.escape(c))
    return re.compile(r"(?<![\w])" + "".join(parts) + r"(?![\w])")


def _string_leaves(doc: Any, prefix: FieldPath = ()) -> list[tuple[FieldPath, str]]:
    if isinstance(doc, Mapping):
        return [x for k, v in doc.items() for x in _string_leaves(v, (*prefix, k))]
    if isinstance(doc, list):
        return [x for i, v in enumerate(doc) for x in _string_leaves(v, (*prefix, i))]
    return [(prefix, doc)] if isinstance(doc, str) else []


def _key(path: FieldPath) -> str | None:
    return next((p for p in reversed(path) if isinstance(p, str)), None)


# --------------------------------------------------------------------------- planting


class _Planter:
    def __init__(
        self,
        truth: Any,
        text: str,
        schema: Mapping[str, Any] | None,
        rules: LabelRules,
        rng: random.Random,
        near_miss: bool = False,
    ):
        self.truth = truth
        self.text = text
        self.schema = dict(schema or {})
        self.rules = rules
        self.rng = rng
        self.near_miss = near_miss

    def _wrong(self, path: FieldPath, value: Any) -> bool:
        ok, _ = compare_values(get_at(self.truth, path), value, _key(path), self.rules)
        return not ok

    def _types(self, path: FieldPath) -> set[str]:
        """JSON types the schema allows at ``path`` (empty when unknown)."""
        if not self.schema:
            return set()
        try:
            node = resolve_schema(self.schema, schema_at(self.schema, path))
        except (KeyError, IndexError, TypeError, ValueError):
            return set()
        options = node.get("anyOf", [node])
        types: set[str] = set()
        for opt in options:
            t = opt.get("type")
            types.update(t if isinstance(t, list) else [t] if t else [])
        return types

    def _enum_values(self, path: FieldPath) -> list[Any]:
        if not self.schema:
            return []
        try:
            node = resolve_schema(self.schema, schema_at(self.schema, path))
        except (KeyError, IndexError, TypeError, ValueError):
            return []
        return [v for v in node.get("enum", []) if v is not None]

    def candidates(self, kind: str, path: FieldPath, value: Any) -> list[Any]:
        if self.near_miss and kind in NEAR_MISS_KINDS:
            near = self._near_candidates(kind, path, value)
            if near is not None:
                return near
        return self._first_candidates(kind, path, value)

    def _near_candidates(self, kind: str, path: FieldPath, value: Any) -> list[Any] | None:
        """Near misses of strings and string lists (None: the value is a number or a date the
        first kinds already handle)."""
        name = _key(path)
        if isinstance(value, list) or (value is None and "array" in self._types(path)):
            return list_candidates(kind, list(value or []), self.text, name, self.truth, self.rng)
        if isinstance(value, str) and not (kind in ("digit_slip", "format_change") and _ISO_DATE.match(value)):
            found = string_candidates(kind, value, self.text, name, self.truth, self.rng)
            if kind == "format_change":
                found += self._first_candidates(kind, path, value)
            return found
        if value is None and kind == "neighbour_type" and "string" in self._types(path):
            return string_candidates(kind, "", self.text, name, self.truth, self.rng)
        return None

    def _first_candidates(self, kind: str, path: FieldPath, value: Any) -> list[Any]:
        if kind == "other_value" and value is not None:
            if isinstance(value, str) and _ISO_DATE.match(value):
                return [d for d in dates_in(self.text) if d != value]
            if isinstance(value, int | float) and not isinstance(value, bool):
                nums = [n for n in _numbers_in(self.text) if n != float(value)]
                return [int(n) if isinstance(value, int) and n.is_integer() else n for n in nums]
            if isinstance(value, str):
                found: list[Any] = []
                pattern = _shape_pattern(value)
                if pattern is not None:
                    found = [m.group(0) for m in pattern.finditer(self.text)]
                if not found:  # another string of this document (the other party, another name)
                    found = [v for p, v in _string_leaves(self.truth) if p != path and v != value]
                    found = [v for v in found if v and v.lower() in self.text.lower()]
                return found
            if isinstance(value, list):
                pool = [v for _, v in _string_leaves(self.truth) if v not in value]
                return [[*value[:-1], v] for v in pool] if value else []
            return []
        if kind == "digit_slip" and value is not None and not isinstance(value, bool | list):
            s = str(value)
            spots = [i for i, c in enumerate(s) if c.isdigit()]
            out: list[Any] = []
            for i in spots:
                d = str((int(s[i]) + self.rng.randint(1, 9)) % 10)
                out.append(s[:i] + d + s[i + 1 :])
                if i + 1 < len(s) and s[i + 1].isdigit() and s[i] != s[i + 1]:
                    out.append(s[:i] + s[i + 1] + s[i] + s[i + 2 :])
            if isinstance(value, int):
                return [int(x) for x in out if x and not x.startswith("0")]
            if isinstance(value, float):
                return [float(x) for x in out]
            return out
        if kind == "format_change" and value is not None:
            if isinstance(value, str) and _ISO_DATE.match(value):
                d = date.fromisoformat(value)
                return [d.strftime("%B %d, %Y"), d.strftime("%d/%m/%Y"), d.strftime("%m/%d/%Y"), d.strftime("%d.%m.%Y")]
            if isinstance(value, int | float) and not isinstance(value, bool):
                return [f"{value:,}", f"{value} EUR", f"${value:,.2f}"]
            return []
        if kind == "invented_value" and value is None:
            types = self._types(path)
            if types & {"integer", "number"} and not types & {"string", "array"}:
                nums = _numbers_in(self.text)
                return [int(n) if "integer" in types else n for n in nums if "number" in types or n.is_integer()]
            strings = [v for _, v in _string_leaves(self.truth) if v]
            strings += re.findall(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b", self.text)
            return [[v] for v in strings] if "array" in types else strings
        if kind == "enum_swap" and isinstance(value, str):
            return [v for v in self._enum_values(path) if v != value]
        return []

    def leaves(self) -> list[FieldPath]:
        out: list[FieldPath] = []

        def walk(v: Any, p: FieldPath) -> None:
            if isinstance(v, Mapping):
                for k, x in v.items():
                    walk(x, (*p, k))
            elif isinstance(v, list) and any(isinstance(x, Mapping) for x in v):
                for i, x in enumerate(v):
                    walk(x, (*p, i))
            else:
                out.append(p)

        walk(self.truth, ())
        return out

    def lists(self) -> list[FieldPath]:
        out: list[FieldPath] = []

        def walk(v: Any, p: FieldPath) -> None:
            if isinstance(v, Mapping):
                for k, x in v.items():
                    walk(x, (*p, k))
            elif isinstance(v, list) and v:
                out.append(p)
                for i, x in enumerate(v):
                    if isinstance(x, Mapping):
                        walk(x, (*p, i))

        walk(self.truth, ())
        return out

    def one(self, kind: str, taken: list[FieldPath]) -> dict[str, Any] | None:
        """One planted error of ``kind`` away from the paths already ``taken``, or None."""

        def free(p: FieldPath) -> bool:
            return all(p[: len(t)] != t and t[: len(p)] != p for t in taken)

        if kind in ("item_dropped", "item_duplicated"):
            lists = [p for p in self.lists() if free(p)]
            self.rng.shuffle(lists)
            for lp in lists:
                items = get_at(self.truth, lp)
                i = self.rng.randrange(len(items))
                if kind == "item_dropped":
                    return {"op": "drop", "path": format_path((*lp, i)), "kind": kind, "container": lp}
                if isinstance(items[i], Mapping):  # a repeated string does not change a set
                    return {"op": "duplicate", "path": format_path((*lp, i)), "kind": kind, "container": lp}
            return None
        leaves = [p for p in self.leaves() if free(p)]
        self.rng.shuffle(leaves)
        for p in leaves:
            value = get_at(self.truth, p)
            cands = [c for c in self.candidates(kind, p, value) if self._wrong(p, c)]
            if cands:
                new = self.rng.choice(cands)
                return {"op": "set", "path": format_path(p), "value": new, "kind": kind, "container": p}
        return None


def plant_errors(
    doc_id: str,
    truth: Any,
    text: str,
    n_errors: int,
    *,
    schema: Mapping[str, Any] | None = None,
    rules: LabelRules | None = None,
    kinds: Sequence[str] = ERROR_KINDS,
    rng: random.Random,
    attempts: int = 20,
    near_miss_share: float | None = None,
) -> list[dict[str, Any]]:
    """Operations planting ``n_errors`` errors whose labels :func:`label_output` confirms.

    Returns fewer operations when the document offers fewer places for an error (a
    document with no lists cannot lose a list item); each operation names its ``kind``.
    With ``near_miss_share`` each error is a near miss with that probability (see the module doc).
    """
    rules = rules or LabelRules()
    planter = _Planter(truth, text, schema, rules, rng, near_miss=near_miss_share is not None)
    for _ in range(attempts):
        ops: list[dict[str, Any]] = []
        taken: list[FieldPath] = []
        if near_miss_share is None:  # the first kinds' draw, unchanged: recorded runs replay exactly
            order = list(kinds)
            while len(ops) < n_errors and order:
                kind = rng.choice(order)
                op = planter.one(kind, taken)
                if op is None:
                    order.remove(kind)
                    continue
                taken.append(op.pop("container"))
                ops.append(op)
        else:
            near = [k for k in kinds if k in NEAR_MISS_KINDS]
            other = [k for k in kinds if k not in NEAR_MISS_KINDS]
            while len(ops) < n_errors and (near or other):
                pool = near if near and (not other or rng.random() < near_miss_share) else other
                kind = rng.choice(pool)
                op = planter.one(kind, taken)
                if op is None:
                    pool.remove(kind)
                    continue
                taken.append(op.pop("container"))
                ops.append(op)
        ops = _sorted_for_replay(ops)
        output = apply_ops(truth, ops)
        if not ops or agrees(label_output(doc_id, truth, output, schema=schema, rules=rules), ops):
            return ops
    raise RuntimeError(f"document {doc_id!r}: could not plant {n_errors} errors that the labels confirm")


def _sorted_for_replay(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Set values first, then list edits from the highest index down, so paths stay valid."""
    sets = [o for o in ops if o["op"] == "set"]
    edits = sorted((o for o in ops if o["op"] != "set"), key=lambda o: parse_path(o["path"]), reverse=True)
    return sets + edits


def expected_error_paths(ops: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where each planted error shows in the *output*: the field set, the list a drop shortened,
    or the extra item a duplicate added (right after the original)."""
    out = []
    for op in ops:
        path = parse_path(op["path"])
        if op["op"] == "set":
            out.append(format_path(path))
        elif op["op"] == "drop":
            out.append(format_path(path[:-1]))
        else:
            out.append(format_path((*path[:-1], path[-1] + 1)))
    return out


def agrees(labels: Any, ops: Sequence[Mapping[str, Any]]) -> bool:
    """Every wrong label lies under a planted error, and every planted error has a wrong label."""
    planted = [parse_path(p) for p in expected_error_paths(ops)]
    wrong = [parse_path(f.path) for f in labels.fields if f.wrong]
    under = all(any(w[: len(p)] == p for p in planted) for w in wrong)
    hit = all(any(w[: len(p)] == p for w in wrong) for p in planted)
    # a duplicate may be paired with either copy: the extra item is then the original's index
    if not under or not hit:
        dup_alt = []
        for op in ops:
            path = parse_path(op["path"])
            dup_alt.append(path if op["op"] == "duplicate" else None)
        alts = [a for a in dup_alt if a is not None]
        if alts:
            planted2 = planted + alts
            under = all(any(w[: len(p)] == p for p in planted2) for w in wrong)
            hit = all(any(w[: len(p)] == p for w in wrong) for p in planted if p not in alts)
    return under and hit and labels.wrong == bool(ops)


def inject_rows(
    records: Sequence[Any],
    schema_for: Any,
    rules: LabelRules,
    config: InjectionConfig,
) -> list[dict[str, Any]]:
    """One output row per record: ``ops`` (and ``injected`` kinds); the exact share of wrong documents."""
    rng = random.Random(f"construct-eval-inject/{config.seed}")
    n_wrong = round(config.doc_error_rate * len(records))
    wrong_idx = set(rng.sample(range(len(records)), n_wrong))
    rows = []
    for i, rec in enumerate(records):
        doc_rng = random.Random(f"construct-eval-inject/{config.seed}/{rec.id}")
        ops: list[dict[str, Any]] = []
        if i in wrong_idx:
            n = doc_rng.randint(config.min_errors, config.max_errors)
            ops = plant_errors(
                rec.id,
                rec.ground_truth,
                rec.text,
                n,
                schema=schema_for(rec),
                rules=rules,
                kinds=config.kinds,
                rng=doc_rng,
                near_miss_share=config.near_miss_share,
            )
        rows.append({"id": rec.id, "sample": 0, "ops": ops, "output_from": "ground_truth+ops"})
    return rows
