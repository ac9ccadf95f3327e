"""/v2.0/{collection}/{id}/tags: neutron's standard-attr-tag API (at most 50 tags of up to
255 characters per resource)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import (address_groups, base, floatingips, networks, ports, qos,
                                 routers, security_groups, subnetpools, subnets, trunks)
from pocketstack.network import exceptions as exc
from pocketstack.network.models import (AddressGroup, FloatingIP, Network, Port, QosPolicy,
                                        Router, SecurityGroup, Subnet, SubnetPool, Tag,
                                        Trunk)

MAX_TAGS = 50
MAX_TAG_LEN = 255

# URL collection -> (model, visibility, not-found error, policy resource name)
RESOURCES = {
    "networks": (Network, networks.visible, exc.NetworkNotFound, "network"),
    "subnets": (Subnet, subnets.visible, exc.SubnetNotFound, "subnet"),
    "ports": (Port, ports.visible, exc.PortNotFound, "port"),
    "security-groups": (SecurityGroup, security_groups.group_visible,
                        exc.SecurityGroupNotFound, "security_group"),
    "routers": (Router, routers.visible, exc.RouterNotFound, "router"),
    "floatingips": (FloatingIP, floatingips.visible, exc.FloatingIPNotFound, "floatingip"),
    "subnetpools": (SubnetPool, subnetpools.visible, exc.SubnetPoolNotFound, "subnetpool"),
    "trunks": (Trunk, trunks.visible, exc.TrunkNotFound, "trunk"),
    # QoS policies: neutron's tag extension hangs them on /v2.0/policies/{id}/tags (where
    # openstacksdk sends them); /v2.0/qos/policies/{id}/tags is routed here too
    "policies": (QosPolicy, qos.visible, exc.QosPolicyNotFound, "policy"),
    "address-groups": (AddressGroup, address_groups.visible, exc.AddressGroupNotFound,
                       "address_group"),
}


def _check_tag(tag) -> str:
    if not isinstance(tag, str) or not tag:
        raise exc.InvalidInput(f"'{tag}' is not a valid string")
    if len(tag) > MAX_TAG_LEN:
        raise exc.InvalidInput(f"'{tag}' exceeds maximum length of {MAX_TAG_LEN}")
    return tag


def _check_body(body) -> list[str]:
    if not isinstance(body, dict) or not isinstance(body.get("tags"), list):
        raise exc.InvalidInput("Invalid tags body")
    tags = [_check_tag(t) for t in body["tags"]]
    if len(set(tags)) != len(tags):
        raise exc.InvalidInput(f"Duplicate items in the list: '{tags}'")
    return tags


def _resource(s, ctx, collection: str, resource_id: str, write: bool):
    if collection not in RESOURCES:
        raise exc.ResourceNotFound("The resource could not be found.")
    model, visible, not_found, name = RESOURCES[collection]
    row = s.scalar(sa.select(model).where(model.id == resource_id, visible(ctx)))
    if row is None:
        raise not_found(resource_id)
    if write:
        base.authorize(ctx, "update_tags", {"project_id": row.project_id})
    return row


def _limit(collection: str, tags) -> None:
    if len(set(tags)) > MAX_TAGS:
        raise exc.BadRequest(RESOURCES[collection][3], "The number of tags exceed the "
                                                       f"per-resource limit of {MAX_TAGS}")


def get_tags(ctx, collection: str, resource_id: str) -> dict:
    with db.reader() as s:
        _resource(s, ctx, collection, resource_id, write=False)
        return {"tags": base.tags_of(s, resource_id)}


def has_tag(ctx, collection: str, resource_id: str, tag: str) -> None:
    _check_tag(tag)
    with db.reader() as s:
        _resource(s, ctx, collection, resource_id, write=False)
        if s.get(Tag, (resource_id, tag)) is None:
            raise exc.TagNotFound(resource_id, tag)


@base.retry_on_deadlock
def replace_tags(ctx, collection: str, resource_id: str, body) -> dict:
    tags = _check_body(body)
    _limit(collection, tags)
    with db.transaction() as s:
        row = _resource(s, ctx, collection, resource_id, write=True)
        base.set_tags(s, resource_id, tags)
        base.touch(row)
        s.flush()
        return {"tags": base.tags_of(s, resource_id)}


@base.retry_on_deadlock
def add_tags(ctx, collection: str, resource_id: str, body) -> dict:
    tags = _check_body(body)
    with db.transaction() as s:
        row = _resource(s, ctx, collection, resource_id, write=True)
        merged = set(base.tags_of(s, resource_id)) | set(tags)
        _limit(collection, merged)
        base.set_tags(s, resource_id, sorted(merged))
        base.touch(row)
        s.flush()
        return {"tags": base.tags_of(s, resource_id)}


@base.retry_on_deadlock
def add_tag(ctx, collection: str, resource_id: str, tag: str) -> None:
    _check_tag(tag)
    with db.transaction() as s:
        row = _resource(s, ctx, collection, resource_id, write=True)
        if s.get(Tag, (resource_id, tag)) is None:
            _limit(collection, base.tags_of(s, resource_id) + [tag])
            s.add(Tag(resource_id=resource_id, tag=tag))
            base.touch(row)


@base.retry_on_deadlock
def delete_tags(ctx, collection: str, resource_id: str) -> None:
    with db.transaction() as s:
        row = _resource(s, ctx, collection, resource_id, write=True)
        base.delete_tags(s, resource_id)
        base.touch(row)


@base.retry_on_deadlock
def delete_tag(ctx, collection: str, resource_id: str, tag: str) -> None:
    _check_tag(tag)
    with db.transaction() as s:
        row = _resource(s, ctx, collection, resource_id, write=True)
        existing = s.get(Tag, (resource_id, tag))
        if existing is None:
            raise exc.TagNotFound(resource_id, tag)
        s.delete(existing)
        base.touch(row)
