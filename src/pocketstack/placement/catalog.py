"""Resource classes and traits: the standard names from os-resource-classes and
os-traits (no rows), custom ``CUSTOM_*`` ones in tables; a provider's traits and
aggregates."""
from __future__ import annotations

import functools
import re

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.common.timeutils import utcnow
from pocketstack.placement import errors, providers
from pocketstack.placement.models import (Allocation, CustomResourceClass, CustomTrait,
                                          Inventory, ProviderAggregate, ProviderTrait)

_CUSTOM = re.compile(r"^CUSTOM_[A-Z0-9_]+$")


@functools.cache
def standard_classes() -> tuple[str, ...]:
    import os_resource_classes

    return tuple(os_resource_classes.STANDARDS)


@functools.cache
def standard_traits() -> frozenset[str]:
    import os_traits

    return frozenset(os_traits.get_traits())


# --- resource classes --------------------------------------------------------------------

def class_exists(s, name: str) -> bool:
    return name in standard_classes() or s.scalar(
        sa.select(CustomResourceClass.id).where(CustomResourceClass.name == name)) is not None


def unknown_classes(s, names) -> list[str]:
    names = set(names) - set(standard_classes())
    if not names:
        return []
    known = set(s.scalars(sa.select(CustomResourceClass.name)
                          .where(CustomResourceClass.name.in_(names))))
    return sorted(names - known)


def list_classes(s) -> list[str]:
    return list(standard_classes()) + list(s.scalars(
        sa.select(CustomResourceClass.name).order_by(CustomResourceClass.id)))


def create_class(s, name: str) -> None:
    if class_exists(s, name):
        raise errors.conflict(f"Conflicting resource class already exists: {name}",
                              errors.DUPLICATE_NAME)
    s.add(CustomResourceClass(name=name))
    s.flush()


def ensure_class(s, name: str) -> bool:
    """PUT /resource_classes/{name} (1.7): True when it was created."""
    if class_exists(s, name):
        return False
    create_class(s, name)
    return True


def _custom_class(s, name: str) -> CustomResourceClass:
    if name in standard_classes():
        raise errors.bad_request(f"Cannot update standard resource class {name}")
    row = s.scalars(sa.select(CustomResourceClass)
                    .where(CustomResourceClass.name == name)).first()
    if row is None:
        raise errors.not_found(f"No such resource class {name}.")
    return row


def rename_class(s, name: str, new: str) -> None:
    """PUT /resource_classes/{name} before 1.7: rows naming it follow."""
    row = _custom_class(s, name)
    if new != name and class_exists(s, new):
        raise errors.conflict(f"Resource class already exists: {new}", errors.DUPLICATE_NAME)
    for model in (Inventory, Allocation):
        s.execute(sa.update(model).where(model.resource_class == name)
                  .values(resource_class=new))
    row.name, row.updated_at = new, utcnow()


def delete_class(s, name: str) -> None:
    if name in standard_classes():
        raise errors.bad_request(f"Cannot delete standard resource class {name}")
    row = _custom_class(s, name)
    if s.scalar(sa.select(Inventory.id).where(Inventory.resource_class == name).limit(1)):
        raise errors.conflict(f"Unable to delete resource class {name}. Delete all "
                              "inventory associated with this resource class first.")
    s.delete(row)


# --- traits ------------------------------------------------------------------------------

def trait_exists(s, name: str) -> bool:
    return name in standard_traits() or s.scalar(
        sa.select(CustomTrait.id).where(CustomTrait.name == name)) is not None


def unknown_traits(s, names) -> list[str]:
    names = set(names) - standard_traits()
    if not names:
        return []
    known = set(s.scalars(sa.select(CustomTrait.name).where(CustomTrait.name.in_(names))))
    return sorted(names - known)


def list_traits(s, name_filter: str | None, associated: bool | None) -> list[str]:
    names = set(standard_traits()) | set(s.scalars(sa.select(CustomTrait.name)))
    if name_filter:
        if name_filter.startswith("startswith:"):
            prefix = name_filter[len("startswith:"):]
            names = {n for n in names if n.startswith(prefix)}
        elif name_filter.startswith("in:"):
            names &= {n.strip() for n in name_filter[3:].split(",")}
        else:
            raise errors.bad_request(f"Badly formatted name parameter. Expected name query "
                                     f"string parameter in form: ?name=[in|startswith]:"
                                     f"[name1,name2|prefix]. Got: \"{name_filter}\"")
    if associated is not None:
        used = set(s.scalars(sa.select(ProviderTrait.trait).distinct()))
        names = names & used if associated else names - used
    return sorted(names)


def ensure_trait(s, name: str) -> bool:
    if not _CUSTOM.match(name) or len(name) > 255:
        raise errors.bad_request(
            'The trait is invalid. A valid trait must be no longer than 255 characters, '
            'start with the prefix "CUSTOM_" and use following characters: "A"-"Z", '
            '"0"-"9" and "_"')
    if trait_exists(s, name):
        return False
    s.add(CustomTrait(name=name))
    s.flush()
    return True


def delete_trait(s, name: str) -> None:
    if name in standard_traits():
        raise errors.bad_request(f"Cannot delete standard trait {name}.")
    row = s.scalars(sa.select(CustomTrait).where(CustomTrait.name == name)).first()
    if row is None:
        raise errors.not_found(f"No such trait(s): {name}.")
    if s.scalar(sa.select(ProviderTrait.trait).where(ProviderTrait.trait == name).limit(1)):
        raise errors.conflict(f"The trait {name} is in use by a resource provider.")
    s.delete(row)


def provider_traits(s, rp_ids) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {i: set() for i in rp_ids}
    for rp_id, trait in s.execute(sa.select(ProviderTrait.resource_provider_id,
                                            ProviderTrait.trait)
                                  .where(ProviderTrait.resource_provider_id.in_(out))):
        out[rp_id].add(trait)
    return out


def set_provider_traits(s, rp, names: list[str], generation: int | None) -> None:
    missing = unknown_traits(s, names)
    if missing:
        raise errors.bad_request(f"No such trait(s): {', '.join(missing)}")
    if generation is not None:
        providers.check_generation(rp, generation)
    s.execute(sa.delete(ProviderTrait).where(ProviderTrait.resource_provider_id == rp.id))
    for name in sorted(set(names)):
        s.add(ProviderTrait(resource_provider_id=rp.id, trait=name))
    s.flush()
    providers.bump(s, rp)


# --- aggregates --------------------------------------------------------------------------

def provider_aggregates(s, rp_id: int) -> list[str]:
    return sorted(s.scalars(sa.select(ProviderAggregate.aggregate_uuid)
                            .where(ProviderAggregate.resource_provider_id == rp_id)))


def set_provider_aggregates(s, rp, aggregates: list[str], generation: int | None,
                            increment: bool = True) -> None:
    """Generations count aggregate changes from 1.19 on (``increment``)."""
    if generation is not None and rp.generation != generation:
        # placement's own words for this one (handlers/aggregate.py)
        raise errors.conflict("Resource provider's generation already changed. Please "
                              "update the generation and try again.",
                              errors.CONCURRENT_UPDATE)
    s.execute(sa.delete(ProviderAggregate)
              .where(ProviderAggregate.resource_provider_id == rp.id))
    for agg in sorted(set(aggregates)):
        s.add(ProviderAggregate(resource_provider_id=rp.id, aggregate_uuid=agg))
    s.flush()
    if increment:
        providers.bump(s, rp)


def reader():
    return db.reader()
