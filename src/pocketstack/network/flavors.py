"""Network flavors and service profiles (/v2.0/flavors, /v2.0/service_profiles, and a
flavor's service_profiles), recorded as neutron records them; admins write them, anyone
reads flavors. No service here is built from a flavor: routers take no flavor_id, so a
flavor is never in use, and a profile's driver must be a loaded service provider's, of
which there is none with a driver: profiles carry metainfo only.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import base
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import Flavor, FlavorServiceProfile, ServiceProfile

# neutron's type:service_plugin_type: the plugin type of every plugin loaded (spelled as
# each plugin's get_plugin_type() answers), the core plugin and this one included
SERVICE_TYPES = ("CORE", "L3_ROUTER_NAT", "FLAVORS", "QOS", "PORTFORWARDING", "TAG", "trunk",
                 "segments", "network-ip-availability", "revision_plugin", "timestamp")

FLAVOR_ATTRS = {
    "name": v.Attr(v.string()),
    "description": v.Attr(v.string(1024, nullable=True)),
    "service_type": v.Attr(v.string(36), put=False),
    "service_profiles": v.Attr(v.list_of(v.uuid_string)),  # ignored, as in neutron
    "enabled": v.Attr(v.boolean),
}
PROFILE_ATTRS = {
    "description": v.Attr(v.string(1024, nullable=True)),
    "driver": v.Attr(v.string(1024)),
    "metainfo": v.Attr(v.string(4096)),
    "enabled": v.Attr(v.boolean),
}


def _admin(ctx, action: str) -> None:
    base.authorize(ctx, action, {"project_id": ctx.project_id})


def _profile_ids(s, flavor_id: str) -> list[str]:
    return list(s.scalars(sa.select(FlavorServiceProfile.service_profile_id).where(
        FlavorServiceProfile.flavor_id == flavor_id).order_by(
        FlavorServiceProfile.service_profile_id)))


def flavor_view(s, flavor: Flavor) -> dict:
    return {"id": flavor.id, "name": flavor.name, "description": flavor.description,
            "service_type": flavor.service_type, "enabled": flavor.enabled,
            "service_profiles": _profile_ids(s, flavor.id)}


def profile_view(profile: ServiceProfile) -> dict:
    return {"id": profile.id, "description": profile.description, "driver": profile.driver,
            "metainfo": profile.metainfo, "enabled": profile.enabled}


def _flavor(s, flavor_id: str) -> Flavor:
    flavor = s.get(Flavor, flavor_id)
    if flavor is None:
        raise exc.FlavorNotFound(flavor_id)
    return flavor


def _profile(s, profile_id: str) -> ServiceProfile:
    profile = s.get(ServiceProfile, profile_id)
    if profile is None:
        raise exc.ServiceProfileNotFound(profile_id)
    return profile


def _filtered(items: list[dict], params) -> list[dict]:
    from pocketstack.network import inventory  # noqa: PLC0415 (its filter helper)

    return [i for i in items if inventory.matches(i, params)]


# --- flavors -----------------------------------------------------------------------------

def create_flavor(ctx, body) -> dict:
    values = v.parse(v.resource_body(body, "flavor"), FLAVOR_ATTRS, update=False)
    _admin(ctx, "create_flavor")
    if "service_type" not in values:
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'service_type' "
                                 "not specified")
    if values["service_type"] not in SERVICE_TYPES:
        raise exc.InvalidServiceType(values["service_type"])
    with db.transaction() as s:
        flavor = Flavor(id=base.new_id(), name=values.get("name", ""),
                        description=values.get("description") or "",
                        service_type=values["service_type"],
                        enabled=values.get("enabled", True))
        s.add(flavor)
        s.flush()
        return flavor_view(s, flavor)


def get_flavor(ctx, flavor_id: str) -> dict:
    with db.reader() as s:
        return flavor_view(s, _flavor(s, flavor_id))


def list_flavors(ctx, params) -> list[dict]:
    with db.reader() as s:
        items = [flavor_view(s, f) for f in s.scalars(sa.select(Flavor).order_by(Flavor.id))]
    return _filtered(items, params)


def update_flavor(ctx, flavor_id: str, body) -> dict:
    values = v.parse(v.resource_body(body, "flavor"), FLAVOR_ATTRS, update=True)
    _admin(ctx, "update_flavor")
    with db.transaction() as s:
        flavor = _flavor(s, flavor_id)
        for key in ("name", "enabled"):
            if key in values:
                setattr(flavor, key, values[key])
        if "description" in values:
            flavor.description = values["description"] or ""
        s.flush()
        return flavor_view(s, flavor)


def delete_flavor(ctx, flavor_id: str) -> None:
    _admin(ctx, "delete_flavor")
    with db.transaction() as s:
        flavor = _flavor(s, flavor_id)
        s.execute(sa.delete(FlavorServiceProfile).where(
            FlavorServiceProfile.flavor_id == flavor.id))
        s.delete(flavor)


# --- service profiles ----------------------------------------------------------------------

def _check_driver(driver: str) -> None:
    if driver:  # no service provider here names a driver
        raise exc.ServiceProfileDriverNotFound(driver)


def create_profile(ctx, body) -> dict:
    values = v.parse(v.resource_body(body, "service_profile"), PROFILE_ATTRS, update=False)
    _admin(ctx, "create_service_profile")
    if values.get("driver"):
        _check_driver(values["driver"])
    elif not values.get("metainfo"):
        raise exc.ServiceProfileEmpty()
    with db.transaction() as s:
        profile = ServiceProfile(id=base.new_id(),
                                 description=values.get("description") or "",
                                 driver=values.get("driver", ""),
                                 metainfo=values.get("metainfo", ""),
                                 enabled=values.get("enabled", True))
        s.add(profile)
        s.flush()
        return profile_view(profile)


def get_profile(ctx, profile_id: str) -> dict:
    _admin(ctx, "get_service_profile")
    with db.reader() as s:
        return profile_view(_profile(s, profile_id))


def list_profiles(ctx, params) -> list[dict]:
    if not base.can(ctx, "get_service_profile", {"project_id": ctx.project_id}):
        return []  # neutron filters out what its policy hides
    with db.reader() as s:
        items = [profile_view(p) for p in s.scalars(sa.select(ServiceProfile)
                                                    .order_by(ServiceProfile.id))]
    return _filtered(items, params)


def _in_use(s, profile_id: str) -> None:
    if s.scalar(sa.select(FlavorServiceProfile.flavor_id).where(
            FlavorServiceProfile.service_profile_id == profile_id).limit(1)):
        raise exc.ServiceProfileInUse(profile_id)


def update_profile(ctx, profile_id: str, body) -> dict:
    values = v.parse(v.resource_body(body, "service_profile"), PROFILE_ATTRS, update=True)
    _admin(ctx, "update_service_profile")
    if values.get("driver"):
        _check_driver(values["driver"])
    with db.transaction() as s:
        profile = _profile(s, profile_id)
        _in_use(s, profile.id)  # neutron: a profile bound to a flavor does not change
        for key, value in values.items():
            setattr(profile, key, value if value is not None else "")
        s.flush()
        return profile_view(profile)


def delete_profile(ctx, profile_id: str) -> None:
    _admin(ctx, "delete_service_profile")
    with db.transaction() as s:
        profile = _profile(s, profile_id)
        _in_use(s, profile.id)
        s.delete(profile)


# --- a flavor's service profiles -------------------------------------------------------

def associate(ctx, flavor_id: str, body) -> dict:
    values = v.parse(v.resource_body(body, "service_profile"),
                     {"id": v.Attr(v.uuid_string)}, update=False)
    if "id" not in values:
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'id' not "
                                 "specified")
    _admin(ctx, "create_flavor_service_profile")
    with db.transaction() as s:
        _flavor(s, flavor_id)
        _profile(s, values["id"])
        if s.get(FlavorServiceProfile, (flavor_id, values["id"])) is not None:
            raise exc.FlavorServiceProfileBindingExists(values["id"], flavor_id)
        s.add(FlavorServiceProfile(flavor_id=flavor_id, service_profile_id=values["id"]))
    return {"id": values["id"]}


def disassociate(ctx, flavor_id: str, profile_id: str) -> None:
    _admin(ctx, "delete_flavor_service_profile")
    with db.transaction() as s:
        binding = s.get(FlavorServiceProfile, (flavor_id, profile_id))
        if binding is None:
            raise exc.FlavorServiceProfileBindingNotFound(profile_id, flavor_id)
        s.delete(binding)


def get_binding(ctx, flavor_id: str, profile_id: str) -> dict:
    with db.reader() as s:
        if s.get(FlavorServiceProfile, (flavor_id, profile_id)) is None:
            raise exc.FlavorServiceProfileBindingNotFound(profile_id, flavor_id)
    return {"service_profile_id": profile_id, "flavor_id": flavor_id}
