"""What a client asks about the service itself: /capabilities/{host} (admin: a volume
backend's capabilities, as cinder's capabilities extension) and /resource_filters (3.33:
which list filters each resource honours, cinder's resource_filters.json - here only the
filters the lists really apply)."""
from __future__ import annotations

from pocketstack.common import exceptions, policy
from pocketstack.volume.rest import microversion
from pocketstack.volume.rest.common import check_project, respond

# resource -> the query filters its list applies (cinder's names and order)
RESOURCE_FILTERS = {
    "volume": ["name", "status", "metadata", "bootable", "availability_zone",
               "created_at", "updated_at", "consumes_quota", "volume_type", "group_id"],
    "backup": ["name", "status", "volume_id"],
    "snapshot": ["name", "status", "volume_id", "consumes_quota"],
    "attachment": ["volume_id", "status", "instance_id", "attach_status"],
    "message": ["resource_uuid"],
    "pool": ["name"],
    "volume_type": ["is_public"],
}

# what cinder's LVM driver reports as the backend's tunable properties
_PROPERTIES = {
    "thin_provisioning": {"title": "Thin Provisioning", "type": "boolean",
                          "description": "Sets thin provisioning."},
    "compression": {"title": "Compression", "type": "boolean",
                    "description": "Enables compression."},
    "qos": {"title": "QoS", "type": "boolean", "description": "Enables QoS."},
    "replication_enabled": {"title": "Replication", "type": "boolean",
                            "description": "Enables replication."},
}


def resource_filters(req):
    check_project(req)
    microversion.require(req, "3.33")
    wanted = req.query.get("resource") or None  # empty: every resource
    if wanted is not None and wanted not in RESOURCE_FILTERS:
        return respond(req, {"resource_filters": []})
    return respond(req, {"resource_filters": [
        {"resource": name, "filters": filters} for name, filters in RESOURCE_FILTERS.items()
        if wanted in (None, name)]})


def show(req):
    """GET /capabilities/{host}: ``host`` is a cinder-volume service's host (host@backend,
    as os-services lists it)."""
    from pocketstack.common import config
    from pocketstack.volume import backends
    from pocketstack.volume.rest.info import pool_capabilities

    check_project(req)
    policy.authorize(req.context, "volume_extension:capabilities")
    host = req.params["host"]
    prefix = f"{config.CONF.host}@"
    backend = host[len(prefix):] if host.startswith(prefix) else None
    if backend not in backends.enabled():
        raise exceptions.NotFound(f"Can't find service: {host[:255]}")
    caps = pool_capabilities(backend)
    return respond(req, {
        "namespace": f"OS::Storage::Capabilities::{host}",
        "vendor_name": caps["vendor_name"], "volume_backend_name": backend,
        "pool_name": None, "driver_version": caps["driver_version"],
        "storage_protocol": caps["storage_protocol"], "display_name": None,
        "description": None, "visibility": None, "replication_targets": [],
        "properties": _PROPERTIES})
