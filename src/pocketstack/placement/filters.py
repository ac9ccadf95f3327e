"""Query-string parsing shared by GET /resource_providers and GET /allocation_candidates,
and the SQL each filter becomes (subqueries of provider ids, so the database filters)."""
from __future__ import annotations

import dataclasses
import re
import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.placement import errors
from pocketstack.placement.models import (Allocation, Inventory, ProviderAggregate,
                                          ProviderTrait)

_RESOURCE = re.compile(r"^([A-Z0-9_]+):([0-9]+)$")


@dataclasses.dataclass
class Traits:
    any_of: list[set[str]] = dataclasses.field(default_factory=list)  # each set: one of
    forbidden: set[str] = dataclasses.field(default_factory=set)

    def names(self) -> set[str]:
        return set().union(*self.any_of, self.forbidden) if self.any_of else set(self.forbidden)

    def satisfied_by(self, traits: set[str]) -> bool:
        return (all(group & traits for group in self.any_of)
                and not (self.forbidden & traits))


@dataclasses.dataclass
class MemberOf:
    any_of: list[set[str]] = dataclasses.field(default_factory=list)
    forbidden: set[str] = dataclasses.field(default_factory=set)


def parse_resources(text: str, param: str = "resources") -> dict[str, int]:
    resources: dict[str, int] = {}
    for part in text.split(","):
        m = _RESOURCE.match(part.strip())
        if not m or text.strip() == "":
            raise errors.bad_request(
                f"Badly formed {param} parameter. Expected {param} query string parameter "
                f"in form: ?{param}=VCPU:2,MEMORY_MB:1024. Got: {text}.",
                errors.QUERYPARAM_BAD_VALUE)
        rc, digits = m.group(1), m.group(2)
        if rc in resources:
            raise errors.bad_request(f"Resource class {rc} appears more than once in "
                                     f"{param}.", errors.QUERYPARAM_BAD_VALUE)
        # more than 10 digits is out of range anyway (and int() refuses 4,300)
        amount = int(digits) if len(digits) <= 10 else None
        if amount is None or amount < 1 or amount > 2 ** 31 - 1:
            shown = digits if len(digits) <= 20 else digits[:20] + "..."
            raise errors.bad_request(f"Requested resource {rc} expected positive integer "
                                     f"amount. Got: {shown}.", errors.QUERYPARAM_BAD_VALUE)
        resources[rc] = amount
    return resources


def parse_required(values: list[str], version: tuple[int, int], param: str = "required",
                   traits: Traits | None = None) -> Traits:
    """``required=A,!B`` (forbidden from 1.22), repeatable and ``in:A,B`` from 1.39."""
    traits = traits or Traits()
    if len(values) > 1 and version < (1, 39):
        raise errors.bad_request(f"Query parameter '{param}' is specified multiple times.",
                                 errors.ILLEGAL_DUPLICATE_QUERYPARAM)
    for value in values:
        if value.startswith("in:") and version >= (1, 39):
            names = [n.strip() for n in value[3:].split(",")]
            if not all(names) or any(n.startswith("!") for n in names):
                raise _bad_traits(param, value)
            traits.any_of.append(set(names))
            continue
        for name in (n.strip() for n in value.split(",")):
            if name.startswith("!") and version >= (1, 22):
                if not name[1:]:
                    raise _bad_traits(param, value)
                traits.forbidden.add(name[1:])
            elif not name:
                raise _bad_traits(param, value)
            else:
                traits.any_of.append({name})
    clash = set().union(*traits.any_of) & traits.forbidden if traits.any_of else set()
    if any(len(g) == 1 and g & traits.forbidden for g in traits.any_of):
        raise errors.bad_request(f"Conflicting required and forbidden traits found in the "
                                 f"following traits keys: {param}: ({', '.join(sorted(clash))})",
                                 errors.QUERYPARAM_BAD_VALUE)
    return traits


def _bad_traits(param: str, value: str):
    return errors.bad_request(f"Invalid query string parameters: Expected '{param}' "
                              f"parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. "
                              f"Got: {value}", errors.QUERYPARAM_BAD_VALUE)


def _agg_uuids(text: str, value: str) -> set[str]:
    out = set()
    for part in text.split(","):
        try:
            out.add(str(uuidlib.UUID(part.strip())))
        except ValueError:
            raise errors.bad_request(f"Invalid query string parameters: Expected 'member_of' "
                                     f"parameter to contain valid UUID(s). Got: {value}",
                                     errors.QUERYPARAM_BAD_VALUE) from None
    return out


def parse_member_of(values: list[str], version: tuple[int, int],
                    in_since: tuple[int, int] = (1, 21)) -> MemberOf:
    """``member_of=a`` / ``in:a,b`` (resource providers 1.3, candidates 1.21), repeated
    (1.24), ``!`` forbidden (1.32)."""
    if len(values) > 1 and version < (1, 24):
        raise errors.bad_request("Query parameter 'member_of' is specified multiple times.",
                                 errors.ILLEGAL_DUPLICATE_QUERYPARAM)
    found = MemberOf()
    for value in values:
        text = value.strip()
        negative = version >= (1, 32) and text.startswith("!")
        text = text[1:] if negative else text
        listed = version >= in_since and text.startswith("in:")
        text = text[3:] if listed else text
        if "," in text and not listed:
            raise errors.bad_request(f"Invalid query string parameters: Expected 'member_of' "
                                     f"parameter to contain valid UUID(s), with in: for more "
                                     f"than one. Got: {value}", errors.QUERYPARAM_BAD_VALUE)
        uuids = _agg_uuids(text, value)
        if negative:
            found.forbidden |= uuids
        else:
            found.any_of.append(uuids)
    return found


# --- SQL ---------------------------------------------------------------------------------

def usage_of(rc: str):
    """Per-provider usage of one resource class (a subquery)."""
    return (sa.select(Allocation.resource_provider_id.label("rp_id"),
                      sa.func.sum(Allocation.used).label("used"))
            .where(Allocation.resource_class == rc)
            .group_by(Allocation.resource_provider_id).subquery())


def with_capacity(rc: str, amount: int):
    """Ids of providers whose inventory of ``rc`` can take ``amount`` more: placement's
    (total - reserved) * allocation_ratio >= used + amount, within min/max unit and step."""
    used = usage_of(rc)
    return (sa.select(Inventory.resource_provider_id)
            .outerjoin(used, used.c.rp_id == Inventory.resource_provider_id)
            .where(Inventory.resource_class == rc,
                   (Inventory.total - Inventory.reserved) * Inventory.allocation_ratio
                   >= sa.func.coalesce(used.c.used, 0) + amount,
                   Inventory.min_unit <= amount, Inventory.max_unit >= amount,
                   sa.literal(amount) % Inventory.step_size == 0))


def trait_clauses(column, traits: Traits) -> list:
    clauses = []
    for group in traits.any_of:
        clauses.append(column.in_(sa.select(ProviderTrait.resource_provider_id)
                                  .where(ProviderTrait.trait.in_(sorted(group)))))
    if traits.forbidden:
        clauses.append(column.not_in(sa.select(ProviderTrait.resource_provider_id)
                                     .where(ProviderTrait.trait.in_(sorted(traits.forbidden)))))
    return clauses


def member_of_clauses(column, member_of: MemberOf) -> list:
    clauses = []
    for group in member_of.any_of:
        clauses.append(column.in_(sa.select(ProviderAggregate.resource_provider_id)
                                  .where(ProviderAggregate.aggregate_uuid.in_(sorted(group)))))
    if member_of.forbidden:
        clauses.append(column.not_in(
            sa.select(ProviderAggregate.resource_provider_id)
            .where(ProviderAggregate.aggregate_uuid.in_(sorted(member_of.forbidden)))))
    return clauses
