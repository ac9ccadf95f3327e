"""Helpers the identity logic modules share: ids, write transactions that turn a unique
constraint race into Keystone's 409, look-ups that 404 in Keystone's words, and the
name comparators of Keystone's list filters."""
from __future__ import annotations

import contextlib
import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions


def new_id() -> str:
    return uuid.uuid4().hex


def conflict(kind: str, details: str) -> exceptions.Conflict:
    return exceptions.Conflict(f"Conflict occurred attempting to store {kind} - {details}.")


def duplicate_name(kind: str, name: str, domain_id: str | None = None) -> exceptions.Conflict:
    if domain_id:
        return conflict(kind, f"Duplicate entry found with name {name} at domain ID {domain_id}")
    return conflict(kind, f"Duplicate entry found with name {name}")


@contextlib.contextmanager
def writing(kind: str, name: str | None = None, domain_id: str | None = None):
    """A write transaction; a unique-constraint violation at commit becomes a 409."""
    try:
        with db.transaction() as s:
            yield s
    except sa.exc.IntegrityError as error:
        if db.is_duplicate(error):
            raise (duplicate_name(kind, name, domain_id) if name
                   else conflict(kind, "Duplicate entry")) from None
        raise


def name_taken(s, model, name: str, domain_id: str | None = None,
               exclude: str | None = None) -> bool:
    """Whether another ``model`` row has ``name`` (within ``domain_id`` when given).
    ``exclude`` is the row being renamed: on a case-insensitive database (MariaDB) a
    rename that changes only the case must not find the row itself."""
    query = sa.select(model.id).where(model.name == name)
    if exclude is not None:
        query = query.where(model.id != exclude)
    if domain_id is not None:
        query = query.where(model.domain_id == domain_id)
    return s.scalar(query.limit(1)) is not None


def get_or_404(s, model, object_id: str, kind: str):
    obj = s.get(model, object_id) if isinstance(object_id, str) else None
    if obj is None:
        raise exceptions.NotFound(f"Could not find {kind}: {object_id}.")
    return obj


def apply_name_filters(query, column, filters: dict, attr: str = "name"):
    """Keystone's exact ``name`` plus ``name__contains`` / ``__icontains`` /
    ``__startswith`` / ``__istartswith`` / ``__endswith`` / ``__iendswith`` (or the same
    comparators on another attribute: ``attr``)."""
    for key, value in filters.items():
        op = key.partition("__")[2]
        if op == "":
            query = query.where(column == value)
        elif op in ("contains", "icontains", "startswith", "istartswith", "endswith",
                    "iendswith"):
            like = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern = {"contains": f"%{like}%", "startswith": f"{like}%",
                       "endswith": f"%{like}"}[op.lstrip("i")]
            if op.startswith("i"):
                query = query.where(column.ilike(pattern, escape="\\"))
            else:
                query = query.where(column.like(pattern, escape="\\"))
        else:
            raise exceptions.ValidationError(f"Unsupported filter: {attr}__{op}.")
    return query


def extra_attributes(ref: dict, known: set[str]) -> dict:
    """What Keystone keeps in ``extra``: every attribute it has no column for."""
    return {k: v for k, v in ref.items() if k not in known}


def attr_filters(query_params, attr: str) -> dict:
    """The ``attr`` and ``attr__<comparator>`` query parameters (Keystone's hints)."""
    return {k: v for k, v in query_params.items() if k == attr or k.startswith(attr + "__")}
