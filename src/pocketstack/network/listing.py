"""Listing any resource as neutron does: filters on any attribute (repeated values mean
"any of"), tag filters, sort_key/sort_dir, limit/marker pagination (keyset, in SQL) with
``<collection>_links``, and ``fields=`` selection.

Each resource describes itself once with a ``Collection``; the query is then built in SQL,
so a page costs the same whatever the table's size.
"""
from __future__ import annotations

import dataclasses
import urllib.parse
from typing import Any, Callable, Mapping

import sqlalchemy as sa

from pocketstack.common import numbers
from pocketstack.network.exceptions.common import HTTPBadRequest
from pocketstack.network.models import Tag

PAGING_PARAMS = {"limit", "marker", "page_reverse", "sort_key", "sort_dir", "fields"}
TAG_PARAMS = {"tags", "tags-any", "not-tags", "not-tags-any"}

Params = Mapping[str, list[str]]


@dataclasses.dataclass
class Collection:
    name: str                                # "networks"
    model: Any
    not_found: Callable[[str], Exception]
    columns: dict[str, Any]                  # API attribute -> column (filter + sort)
    special: dict[str, Callable[[list[str]], Any]] = dataclasses.field(default_factory=dict)
    # Attributes shown but not filterable in neutron either (lists, dicts): ignored quietly.
    ignored: frozenset = frozenset()


@dataclasses.dataclass
class Page:
    rows: list
    has_more: bool
    reverse: bool
    marker: str | None
    limit: int | None


def params_from(mapping: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """Plain keyword filters (for callers inside pocketstack) in the query-string shape."""
    out: dict[str, list[str]] = {}
    for key, value in (mapping or {}).items():
        values = value if isinstance(value, (list, tuple, set)) else [value]
        out[key] = [v if isinstance(v, str) else str(v).lower() if isinstance(v, bool)
                    else str(v) for v in values]
    return out


def _convert(column, name: str, value: str):
    kind = column.type.python_type if hasattr(column, "type") else str
    if kind is bool:
        if value.lower() in ("true", "1"):
            return True
        if value.lower() in ("false", "0"):
            return False
        raise HTTPBadRequest(f"Invalid input for {name}. Reason: '{value}' cannot be "
                             "converted to boolean.")
    if kind is int:
        if not numbers.is_int_text(value.strip(), signed=True):  # ASCII, within int64
            raise HTTPBadRequest(f"Invalid input for {name}. Reason: '{value}' is not an "
                                 "integer in range.")
        return int(value)
    return value


def filter_values(coll: Collection, name: str, values: list[str]) -> list:
    """A filter's values converted to its column's type (400 if they do not convert)."""
    return [_convert(coll.columns[name], name, v) for v in values]


def filter_clauses(coll: Collection, params: Params) -> list:
    clauses = []
    for name, values in params.items():
        if name in PAGING_PARAMS or name in coll.ignored:
            continue
        if name in TAG_PARAMS:
            clauses.append(_tag_clause(coll.model.id, name, values))
        elif name in coll.special:
            clauses.append(coll.special[name](values))
        elif name in coll.columns:
            column = coll.columns[name]
            clauses.append(column.in_([_convert(column, name, v) for v in values]))
        else:
            raise HTTPBadRequest(f"{name} is invalid attribute for filtering")
    return clauses


def _tag_clause(id_column, param: str, values: list[str]):
    tags = [t for v in values for t in v.split(",") if t]
    has = lambda tag: id_column.in_(sa.select(Tag.resource_id).where(Tag.tag == tag))  # noqa: E731
    if param == "tags":
        return sa.and_(*[has(t) for t in tags]) if tags else sa.true()
    if param == "not-tags":
        return sa.not_(sa.and_(*[has(t) for t in tags])) if tags else sa.true()
    any_of = id_column.in_(sa.select(Tag.resource_id).where(Tag.tag.in_(tags)))
    return any_of if param == "tags-any" else sa.not_(any_of)


def _single(params: Params, name: str) -> str | None:
    values = params.get(name) or []
    return values[-1] if values else None


def _sorts(coll: Collection, params: Params) -> list[tuple[Any, bool]]:
    keys, dirs = params.get("sort_key", []), params.get("sort_dir", [])
    if dirs and len(dirs) != len(keys):
        raise HTTPBadRequest("The number of sort_keys and sort_dirs must be same")
    sorts = []
    for i, key in enumerate(keys):
        if key not in coll.columns:
            raise HTTPBadRequest(f"{key} is invalid attribute for sort_key")
        direction = dirs[i] if dirs else "asc"
        if direction not in ("asc", "desc"):
            raise HTTPBadRequest(f"{direction} is invalid value for sort_dir")
        sorts.append((coll.columns[key], direction == "asc"))
    if not any(column is coll.model.id for column, _ in sorts):
        sorts.append((coll.model.id, True))
    return sorts


def _after(sorts: list[tuple[Any, bool]], marker_row) -> Any:
    """Rows strictly after ``marker_row`` in the given order (keyset pagination)."""
    alternatives = []
    for i, (column, ascending) in enumerate(sorts):
        value = getattr(marker_row, column.key)
        equal_before = [c == getattr(marker_row, c.key) for c, _ in sorts[:i]]
        step = column > value if ascending else column < value
        alternatives.append(sa.and_(*equal_before, step))
    return sa.or_(*alternatives)


def select_page(session, coll: Collection, params: Params, visible, options=()) -> Page:
    """The rows of one page, visible to the caller and matching the filters."""
    limit_text = _single(params, "limit")
    limit = None
    if limit_text not in (None, ""):
        # Clamped: databases refuse bigger LIMITs.
        limit = numbers.parse_limit(limit_text, "limit", 2 ** 31, error=HTTPBadRequest,
                                    message=f"Limit must be an integer 0 or greater and not "
                                            f"'{limit_text}'") or None
    reverse = (_single(params, "page_reverse") or "").lower() == "true"
    sorts = _sorts(coll, params)
    if reverse:
        sorts = [(column, not ascending) for column, ascending in sorts]
    query = sa.select(coll.model).where(visible, *filter_clauses(coll, params))
    marker = _single(params, "marker")
    if marker:
        marker_row = session.scalar(sa.select(coll.model).where(coll.model.id == marker,
                                                                visible))
        if marker_row is None:
            raise coll.not_found(marker)
        query = query.where(_after(sorts, marker_row))
    query = query.order_by(*[c.asc() if asc else c.desc() for c, asc in sorts])
    if limit:
        query = query.limit(limit + 1)
    rows = list(session.scalars(query.options(*options)).unique())
    has_more = bool(limit) and len(rows) > limit
    rows = rows[:limit] if limit else rows
    if reverse:
        rows.reverse()
    return Page(rows, has_more, reverse, marker, limit)


def select_fields(item: dict, params: Params) -> dict:
    fields = [f for value in params.get("fields", []) for f in value.split(",") if f]
    if not fields:
        return item
    return {k: v for k, v in item.items() if k in fields}


def links(page: Page, coll: Collection, base_url: str, params: Params) -> list[dict]:
    """neutron's next/previous links: next when more rows follow, previous after a marker."""
    if not page.limit or not page.rows:
        return []
    keep = [(k, v) for k, values in params.items() if k not in ("marker", "page_reverse")
            for v in values]

    def href(marker: str, reverse: bool) -> str:
        query = keep + [("marker", marker)] + ([("page_reverse", "True")] if reverse else [])
        return f"{base_url}/v2.0/{coll.name}?{urllib.parse.urlencode(query)}"

    out = []
    more_forward = page.has_more if not page.reverse else bool(page.marker)
    more_backward = bool(page.marker) if not page.reverse else page.has_more
    if more_forward:
        out.append({"rel": "next", "href": href(page.rows[-1].id, False)})
    if more_backward:
        out.append({"rel": "previous", "href": href(page.rows[0].id, True)})
    return out


def tags_by_id(session, ids: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if not ids:
        return out
    for chunk in range(0, len(ids), 500):
        for resource_id, tag in session.execute(
                sa.select(Tag.resource_id, Tag.tag).where(
                    Tag.resource_id.in_(ids[chunk:chunk + 500])).order_by(Tag.tag)):
            out.setdefault(resource_id, []).append(tag)
    return out
