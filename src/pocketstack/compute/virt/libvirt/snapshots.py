"""Server snapshots of rbd-backed guests straight into the image service's rbd store
(nova's Rbd.direct_snapshot with the libvirt driver's fallback): no byte leaves the cluster.

The new image is an RBD image in the pool the server's image came from (the root disk's
clone parent, else the base image's location in this cluster), registered with the image
service as a location: glance's location API (``POST /v2/images/{id}/locations``, 2024.1),
else the older ``add /locations/-`` JSON patch. When neither is possible — the base image
is not in this cluster, our cephx user cannot write the image pool, the image service
takes no locations — the RBD image is removed and the caller uploads the data as before.
"""
from __future__ import annotations

import logging

from pocketstack.common import ceph
from pocketstack.compute.virt.libvirt.rbd import image_urls, parse_url

LOG = logging.getLogger(__name__)


def _parent_pool(rbd, name: str, base: dict) -> str | None:
    try:
        with rbd.rbd.Image(rbd.ioctx(), name, read_only=True) as disk:
            return disk.parent_info()[0]
    except rbd.rbd.ImageNotFound:
        pass  # not a clone: ask where its image lives
    fsid = rbd.fsid()
    for url in image_urls(base):
        parts = parse_url(url)
        if parts and parts[0] == fsid:
            return parts[1]
    return None


def takes_locations(base: dict) -> bool:
    """Whether the image service can be given a location: glance's location API (image
    API 2.17), or ``add /locations`` where it shows locations (show_multiple_locations).
    Asked first: a flatten copies the whole disk, not worth it for nothing."""
    from pocketstack.clients.image import ImageClient

    if "locations" in base:
        return True

    class Root(ImageClient):
        base_path = "/image"

    try:
        found = Root().request("GET", "/versions", ok=(200, 300)).json()["versions"]
        newest = max(tuple(int(n) for n in v["id"].lstrip("v").split(".")) for v in found)
    except Exception as error:  # noqa: BLE001 - no discovery: assume the old API only
        LOG.info("Image API version discovery failed: %s", error)
        return False
    return newest >= (2, 17)


def direct(rbd, ctx, instance: dict, image_id: str) -> bool:
    """Snapshot ``instance``'s rbd root disk into image ``image_id`` (queued); False
    leaves nothing behind and tells the caller to upload instead."""
    from pocketstack.clients.image import ImageClient

    name = rbd.name(instance["uuid"])
    if not rbd.exists(name):
        return False
    base = (ImageClient().get(instance["image_ref"]) if instance.get("image_ref")
            else None) or {}
    if not takes_locations(base):
        LOG.info("Snapshot of %s: the image service takes no locations; uploading",
                 instance["uuid"])
        return False
    pool = _parent_pool(rbd, name, base)
    if not pool:
        LOG.info("Snapshot of %s: its image is not in this cluster; uploading",
                 instance["uuid"])
        return False
    try:
        url = rbd.direct_snapshot(name, image_id, pool)
    except (rbd.rbd.Error, ceph.CephUnavailable) as error:
        # e.g. our user may only read the image pool (the Ceph guide's client.cinder)
        LOG.info("Direct snapshot of %s into pool %s failed (%s); uploading",
                 instance["uuid"], pool, error)
        return False
    try:
        registered = _register(image_id, url)
    except Exception:
        rbd.remove(image_id, pool=pool)
        raise
    if not registered:
        rbd.remove(image_id, pool=pool)
    return registered


def _register(image_id: str, url: str) -> bool:
    """The RBD image as the image's data (raw); False when the image service refuses."""
    from pocketstack.clients.image import ImageClient

    client = ImageClient()  # as nova's service user: locations are the service's to set
    resp = client.patch(image_id, [{"op": "replace", "path": "/disk_format",
                                    "value": "raw"}])
    if resp.status_code != 200:
        LOG.info("Image %s refused disk_format raw (%s)", image_id, resp.status_code)
        return False
    resp = client.request("POST", f"/images/{image_id}/locations",
                          json={"url": url, "validation_data": {}},
                          ok=(200, 201, 202, 204, 400, 403, 404, 405, 409, 415))
    if resp.status_code in (200, 201, 202, 204):
        return True
    resp = client.patch(image_id, [{"op": "add", "path": "/locations/-",
                                    "value": {"url": url, "metadata": {}}}])
    if resp.status_code == 200:
        return True
    LOG.info("The image service takes no location for %s (%s); uploading", image_id,
             resp.status_code)
    # the upload path sends qcow2 data: give the image its format back
    client.patch(image_id, [{"op": "replace", "path": "/disk_format", "value": "qcow2"}])
    return False

