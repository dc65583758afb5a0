"""Field paths: the names under which a judge rates, and labels mark, parts of a JSON output.

A path is a tuple of parts, each a key (``str``) or a list index (``int``). Its text form
is what judges see and what run files store::

    policy_details.policy_number
    insured_objects[0].year
    ["key.with.dots"]["x"][2]

Plain identifiers are written bare after a dot; any other key is written as a JSON string in
brackets, so every key (dots, brackets, quotes, spaces, non-ASCII, empty) round-trips
exactly through :func:`format_path` and :func:`parse_path`.

Granularity decides how deep a study looks:

* ``top``: the top-level keys (what the paper's peers and TLM score);
* ``item``: objects are descended, a list of objects yields one path per item;
* ``leaf``: every scalar, ``null`` and list of scalars (a list of strings is one value,
  compared as a set by the labels).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from enum import StrEnum
from typing import Any

PathPart = str | int
FieldPath = tuple[PathPart, ...]

DOCUMENT = "__doc__"
"""The field name that judgment records use for a whole-document rating."""

_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")


class Granularity(StrEnum):
    TOP = "top"
    ITEM = "item"
    LEAF = "leaf"


class FieldPathError(ValueError):
    """A path string that is not well formed, or a path that does not exist in a document."""


class _Missing:
    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


def is_empty(value: Any) -> bool:
    """Whether an output left a field empty: a missing key (:data:`MISSING`), ``null``, ``""``,
    ``[]`` or ``{}``. The one definition the tables' output kinds, the decisions' per-document
    counts and the findings' counts share (an empty field is a different question for a judge)."""
    return value is MISSING or value is None or (isinstance(value, str | list | dict) and len(value) == 0)


"""Returned by :func:`get_at` where a path does not exist (distinct from JSON ``null``)."""


# --------------------------------------------------------------------------- text form


def format_path(path: Iterable[PathPart]) -> str:
    """Render a path tuple as its canonical text form."""
    out: list[str] = []
    for part in path:
        if isinstance(part, bool) or not isinstance(part, (str, int)):
            raise FieldPathError(f"path part {part!r} is neither a key nor an index")
        if isinstance(part, int):
            if part < 0:
                raise FieldPathError(f"negative list index {part} in path")
            out.append(f"[{part}]")
        elif _BARE_KEY.match(part):
            out.append(f".{part}" if out else part)
        else:
            out.append("[" + json.dumps(part, ensure_ascii=False) + "]")
    return "".join(out)


def parse_path(text: str) -> FieldPath:
    """Parse the text form produced by :func:`format_path` back into a tuple."""
    parts: list[PathPart] = []
    i, n = 0, len(text)
    decoder = json.JSONDecoder()
    expect_key = True  # a bare key may start the path or follow a dot
    while i < n:
        ch = text[i]
        if ch == "[":
            if i + 1 < n and text[i + 1] == '"':
                try:
                    key, end = decoder.raw_decode(text, i + 1)
                except json.JSONDecodeError as exc:
                    raise FieldPathError(f"bad quoted key in path {text!r}: {exc.msg}") from exc
                if not isinstance(key, str) or end >= n or text[end] != "]":
                    raise FieldPathError(f"bad quoted key in path {text!r} at {i}")
                parts.append(key)
                i = end + 1
            else:
                close = text.find("]", i)
                digits = text[i + 1 : close] if close != -1 else ""
                if not digits.isdigit() or not digits.isascii():
                    raise FieldPathError(f"bad list index in path {text!r} at {i}")
                parts.append(int(digits))
                i = close + 1
            expect_key = False
        elif ch == ".":
            if not parts or i + 1 >= n:
                raise FieldPathError(f"misplaced '.' in path {text!r} at {i}")
            i += 1
            expect_key = True
            m = _BARE_KEY.match(_take_bare(text, i))
            if not m:
                raise FieldPathError(f"expected a key after '.' in path {text!r} at {i}")
        else:
            if not expect_key:
                raise FieldPathError(f"unexpected {ch!r} in path {text!r} at {i}")
            key = _take_bare(text, i)
            if not _BARE_KEY.match(key):
                raise FieldPathError(f"bad key {key!r} in path {text!r}")
            parts.append(key)
            i += len(key)
            expect_key = False
    if not parts and text:
        raise FieldPathError(f"empty path {text!r}")
    return tuple(parts)


def _take_bare(text: str, start: int) -> str:
    end = start
    while end < len(text) and text[end] not in ".[":
        end += 1
    return text[start:end]


# --------------------------------------------------------------------------- access


def get_at(doc: Any, path: Iterable[PathPart]) -> Any:
    """The value at ``path`` in ``doc``, or :data:`MISSING` where it does not exist."""
    node = doc
    for part in path:
        if isinstance(part, str) and isinstance(node, Mapping):
            if part not in node:
                return MISSING
            node = node[part]
        elif isinstance(part, int) and isinstance(node, list):
            if part >= len(node):
                return MISSING
            node = node[part]
        else:
            return MISSING
    return node


def without_others(doc: Any, keep: FieldPath, placeholder: str = "<ignored>") -> Any:
    """A copy of ``doc`` where everything outside ``keep`` (and its ancestors) is masked.

    Useful for prompt variants that hide other fields from a per-field judge instead of
    only telling it to ignore them.
    """
    if not keep:
        return doc
    head, rest = keep[0], keep[1:]
    if isinstance(doc, Mapping) and isinstance(head, str):
        return {k: (without_others(v, rest, placeholder) if k == head else placeholder) for k, v in doc.items()}
    if isinstance(doc, list) and isinstance(head, int):
        return [without_others(v, rest, placeholder) if i == head else placeholder for i, v in enumerate(doc)]
    return doc


# --------------------------------------------------------------------------- schema


def resolve_schema(schema: Mapping[str, Any], node: Mapping[str, Any] | None) -> dict[str, Any]:
    """Follow local ``$ref`` and pick the non-null branch of ``anyOf``/``oneOf`` optionals."""
    seen = 0
    current: Any = node or {}
    while isinstance(current, Mapping):
        seen += 1
        if seen > 64:
            raise FieldPathError("schema $ref chain too deep (cycle?)")
        if "$ref" in current:
            current = _follow_ref(schema, current["$ref"])
            continue
        for key in ("anyOf", "oneOf"):
            branches = current.get(key)
            if isinstance(branches, list):
                non_null = [b for b in branches if not (isinstance(b, Mapping) and b.get("type") == "null")]
                if len(non_null) == 1:
                    current = non_null[0]
                    break
        else:
            return dict(current)
    return {}


def _follow_ref(schema: Mapping[str, Any], ref: str) -> Any:
    if not ref.startswith("#/"):
        raise FieldPathError(f"only local $ref is supported, got {ref!r}")
    node: Any = schema
    for token in ref[2:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or token not in node:
            raise FieldPathError(f"unresolvable $ref {ref!r}")
        node = node[token]
    return node


def _schema_type(node: Mapping[str, Any]) -> str | None:
    t = node.get("type")
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        return non_null[0] if len(non_null) == 1 else None
    if t is None and "properties" in node:
        return "object"
    if t is None and "items" in node:
        return "array"
    return t


def schema_keys(schema: Mapping[str, Any], node: Mapping[str, Any] | None = None) -> list[str]:
    """The property names an object node of the schema declares, in declaration order."""
    resolved = resolve_schema(schema, node if node is not None else schema)
    props = resolved.get("properties")
    return list(props) if isinstance(props, Mapping) else []


def _child_schema(schema: Mapping[str, Any], node: Mapping[str, Any], part: PathPart) -> dict[str, Any]:
    resolved = resolve_schema(schema, node)
    if isinstance(part, str):
        props = resolved.get("properties")
        if isinstance(props, Mapping) and part in props:
            return resolve_schema(schema, props[part])
        return {}
    items = resolved.get("items")
    return resolve_schema(schema, items) if isinstance(items, Mapping) else {}


def schema_at(schema: Mapping[str, Any], path: FieldPath) -> dict[str, Any]:
    """The (resolved) sub-schema describing ``path``, or ``{}`` where the schema is silent."""
    node: dict[str, Any] = resolve_schema(schema, schema)
    for part in path:
        node = _child_schema(schema, node, part)
    return node


# --------------------------------------------------------------------------- enumerate


def _is_object_list(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(v, Mapping) for v in value)


def _walk(
    schema: Mapping[str, Any],
    node_schema: Mapping[str, Any],
    values: list[Any],
    prefix: FieldPath,
    granularity: Granularity,
) -> Iterator[FieldPath]:
    """Yield paths below ``prefix``, where ``values`` are the documents' values there."""
    resolved = resolve_schema(schema, node_schema)
    kind = _schema_type(resolved)
    present = [v for v in values if v is not MISSING]
    is_object = kind == "object" or any(isinstance(v, Mapping) for v in present)
    is_object_list = (kind == "array" and _schema_type(_child_schema(schema, resolved, 0)) == "object") or any(
        _is_object_list(v) for v in present
    )
    if prefix and granularity is Granularity.TOP:
        yield prefix
        return
    if is_object and not any(isinstance(v, list) for v in present):
        keys: list[str] = list(schema_keys(schema, resolved))
        for v in present:
            if isinstance(v, Mapping):
                keys.extend(k for k in v if k not in keys)
        objects = [v for v in present if isinstance(v, Mapping)]
        if not keys or (not objects and prefix):
            # an empty object, or null where the schema expects an object: one value
            if prefix:
                yield prefix
            return
        for key in keys:
            yield from _walk(
                schema,
                _child_schema(schema, resolved, key),
                [v.get(key, MISSING) if isinstance(v, Mapping) else MISSING for v in values],
                (*prefix, key),
                granularity,
            )
        return
    if is_object_list and prefix:
        lists = [v for v in present if isinstance(v, list)]
        length = max((len(v) for v in lists), default=0)
        if length == 0:
            yield prefix
            return
        item_schema = _child_schema(schema, resolved, 0)
        for i in range(length):
            item_path = (*prefix, i)
            if granularity is Granularity.ITEM:
                yield item_path
                continue
            yield from _walk(
                schema,
                item_schema,
                [v[i] if isinstance(v, list) and i < len(v) else MISSING for v in values],
                item_path,
                granularity,
            )
        return
    if prefix:
        yield prefix


def field_paths(
    schema: Mapping[str, Any] | None,
    *documents: Any,
    granularity: Granularity | str = Granularity.TOP,
) -> list[FieldPath]:
    """All field paths of the documents at a granularity, schema order first, no repeats.

    Paths come from the schema (declared keys, even where a document lacks them) and from
    every document given (keys the schema does not declare; list items by index). Lists
    of objects are indexed by position: pairing items of two documents is the labels'
    job, not this function's.
    """
    gran = Granularity(granularity)
    schema = schema or {}
    docs = list(documents) if documents else [MISSING]
    seen: dict[FieldPath, None] = {}
    for path in _walk(schema, schema, docs, (), gran):
        seen.setdefault(path, None)
    return list(seen)


def field_names(schema: Mapping[str, Any] | None, *documents: Any, granularity: Granularity | str = "top") -> list[str]:
    """:func:`field_paths` in text form."""
    return [format_path(p) for p in field_paths(schema, *documents, granularity=granularity)]
