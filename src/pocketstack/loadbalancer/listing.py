"""Listing as Octavia does (octavia/api/common/pagination.py), in SQL: attribute and tag
filters, ``sort=key:dir,...`` (or ``sort_key``/``sort_dir``) with created_at and id
added, ``limit`` (at most [loadbalancer] pagination_max_limit; 0, a negative limit or
``infinite``: no limit), ``marker`` and ``page_reverse`` as keyset pagination, and the
next/previous links. A page costs the same whatever the table's size.

network/listing.py does neutron's listing over a tag table; here tags are a JSON list
on each row, and sorting is on nullable columns (names, descriptions), so the keyset is
NULL-safe: NULLs sort first in every database (as Octavia, which compares them as '' or
0), and a marker whose key is NULL is followed by the NULLs after it.
"""
from __future__ import annotations

import dataclasses
import urllib.parse
from typing import Any, Callable

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from pocketstack.loadbalancer import validation

DEFAULT_SORT_DIR = "asc"
DEFAULT_SORT_KEYS = ("created_at", "id")
TAG_PARAMS = ("tags", "tags-any", "not-tags", "not-tags-any")
PAGING_PARAMS = ("fields", "limit", "marker", "page_reverse", "sort", "sort_key",
                 "sort_dir")


class json_has(FunctionElement):
    """``json_has(column, value)``: the JSON list in ``column`` holds the string."""
    type = sa.Boolean()
    inherit_cache = True
    name = "json_has"


@compiles(json_has, "sqlite")
def _json_has_sqlite(element, compiler, **kw):
    column, value = (compiler.process(c, **kw) for c in element.clauses)
    return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = {value})"


@compiles(json_has, "postgresql")
def _json_has_postgresql(element, compiler, **kw):
    column, value = (compiler.process(c, **kw) for c in element.clauses)
    return (f"COALESCE(CAST({column} AS JSONB) @> jsonb_build_array(CAST({value} AS TEXT)), "
            f"FALSE)")


@compiles(json_has, "mysql")
@compiles(json_has, "mariadb")
def _json_has_mysql(element, compiler, **kw):
    column, value = (compiler.process(c, **kw) for c in element.clauses)
    return f"COALESCE(JSON_CONTAINS({column}, JSON_QUOTE({value})), 0)"


def values(query, name: str) -> list[str]:
    """A parameter's values, repeated or comma-separated."""
    return [v for value in query.getlist(name) for v in value.split(",") if v]


def tag_clauses(column, query) -> list:
    """Octavia's tag filters: tags (all of), tags-any, not-tags (not all of),
    not-tags-any (none of)."""
    out = []
    for param in TAG_PARAMS:
        tags = values(query, param)
        if not tags:
            continue
        has = [json_has(column, sa.literal(t, sa.String)) for t in tags]
        clause = sa.and_(*has) if param in ("tags", "not-tags") else sa.or_(*has)
        out.append(sa.not_(clause) if param.startswith("not-") else clause)
    return out


def _last(query, name: str) -> str | None:
    found = query.getlist(name)
    return found[-1] if found else None


def parse_limit(query, maximum: int | None) -> int | None:
    """Octavia's _parse_limit: none given is the maximum; 'infinite' or below 1 none."""
    text = _last(query, "limit")
    if text is None:
        return maximum
    try:
        if text == "infinite" or int(text) < 1:
            return None
        return int(text) if maximum is None else min(int(text), maximum)
    except ValueError:
        raise validation.Invalid(f"Supplied pagination limit '{text}' is not "
                                 f"valid.") from None


def _direction(text: str) -> str:
    if text.lower() not in ("asc", "desc"):
        raise validation.Invalid(f"Supplied sort direction '{text.lower()}' is not valid.")
    return text.lower()


def sort_keys(query) -> list[tuple[str, str]]:
    """Octavia's _parse_sort_keys: sort=key[:dir],... else sort_key=... with sort_dir=...
    (directions missing are ascending); then created_at and id unless named."""
    out = []
    sort = ",".join(query.getlist("sort"))
    if sort:
        for item in sort.split(","):
            parts = item.split(":")
            if len(parts) > 2:
                raise validation.Invalid(f"Supplied sort key '{item}' is not valid.")
            out.append((parts[0], _direction(parts[1]) if len(parts) == 2
                        else DEFAULT_SORT_DIR))
    elif query.getlist("sort_key"):
        keys = ",".join(query.getlist("sort_key")).split(",")
        dirs = ",".join(query.getlist("sort_dir")).split(",") if query.getlist(
            "sort_dir") else []
        dirs += [DEFAULT_SORT_DIR] * (len(keys) - len(dirs))
        out = [(key, _direction(d)) for key, d in zip(keys, dirs)]
    named = {key for key, _ in out}
    return out + [(key, DEFAULT_SORT_DIR) for key in DEFAULT_SORT_KEYS if key not in named]


@dataclasses.dataclass
class Term:
    """One expression of the order, and how to read its value off a row."""
    expr: Any
    ascending: bool
    value: Callable[[Any], Any]


def terms(sorts: list[tuple[Any, bool]]) -> list[Term]:
    """The order for (column, ascending) pairs: a nullable column sorts on whether it is
    NULL first (NULLs first ascending), so every database orders NULLs alike."""
    out = []
    for column, ascending in sorts:
        key = column.key
        if column.property.columns[0].nullable:
            out.append(Term(sa.case((column.is_(None), 0), else_=1), ascending,
                            lambda row, key=key: 0 if getattr(row, key) is None else 1))
        out.append(Term(column, ascending, lambda row, key=key: getattr(row, key)))
    return out


def order_by(order: list[Term]) -> list:
    return [t.expr.asc() if t.ascending else t.expr.desc() for t in order]


def after(order: list[Term], marker_row) -> Any:
    """The rows strictly after ``marker_row`` in the order (keyset pagination)."""
    alternatives = []
    for i, term in enumerate(order):
        value = term.value(marker_row)
        if value is None:
            continue  # among NULLs none is after another: the next key decides
        equal = []
        for before in order[:i]:
            seen = before.value(marker_row)
            equal.append(before.expr.is_(None) if seen is None else before.expr == seen)
        step = term.expr > value if term.ascending else term.expr < value
        alternatives.append(sa.and_(*equal, step))
    return sa.or_(*alternatives) if alternatives else sa.false()


def links(rows: list, *, url: str, query, limit: int | None, has_more: bool,
          reverse: bool, marker: str | None) -> list[dict]:
    """The next link when rows follow the page, the previous one when rows come before
    it, the query's other parameters kept (Octavia's links drop the filters, so that
    following them lists other rows)."""
    if not limit or not rows:
        return []
    kept = [(k, v) for k, v in query.multi_items() if k not in ("marker", "page_reverse")]

    def href(marker_id: str, backward: bool) -> str:
        extra = [("page_reverse", "True")] if backward else []
        return f"{url}?{urllib.parse.urlencode(kept + [('marker', marker_id)] + extra)}"

    out = []  # in Octavia's order: previous, then next
    if (bool(marker) if not reverse else has_more):
        out.append({"href": href(rows[0].id, True), "rel": "previous"})
    if (has_more if not reverse else bool(marker)):
        out.append({"href": href(rows[-1].id, False), "rel": "next"})
    return out
