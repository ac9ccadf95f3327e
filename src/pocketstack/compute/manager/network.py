"""Ports for a server (seed steps 22-24), nova's allocate_for_instance in small: create a
port per requested network (or bind the port the user passed) with device_id = server id,
device_owner = compute:<zone>, binding:host_id = host; on failure or delete, delete the
ports we created and unbind the user's."""
from __future__ import annotations

import logging
import re

from pocketstack.clients.network import NetworkClient
from pocketstack.compute.manager.errors import PortBindingFailed, Superseded

LOG = logging.getLogger(__name__)
_DNS_LABEL = re.compile(r"^(?!-)(?![0-9]+$)[A-Za-z0-9-]{1,63}(?<!-)$")


def _vif(port: dict, network_name: str, created: bool, tag: str | None) -> dict:
    return {"port_id": port["id"], "network_id": port["network_id"],
            "network_name": network_name, "mac_address": port.get("mac_address"),
            "fixed_ips": [{"ip_address": ip["ip_address"], "subnet_id": ip.get("subnet_id"),
                           "version": 6 if ":" in ip["ip_address"] else 4}
                          for ip in port.get("fixed_ips", [])],
            "created": created, "tag": tag}


def binding(instance, host: str) -> dict:
    return {"device_id": instance.uuid, "device_owner": f"compute:{instance.availability_zone}",
            "binding:host_id": host}


def allocate(ctx, instance, host: str, vifs: list, reuse: bool = False,
             is_live=None) -> set[str]:
    """Append to ``vifs`` as ports come, so a failure half-way still knows what to undo.
    ``reuse``: a rescheduled or resumed build, whose server may have ports already.
    ``is_live(uuid)``: whether the server still exists (the host's own way to ask).
    Returns the ports that were plugged already (nothing to wait for: a port that stays
    ACTIVE while it is bound again sends no network-vif-plugged, as in nova's
    _get_neutron_events, which waits only for the ports not active yet)."""
    requested = instance.requested_networks
    if not isinstance(requested, list):
        return set()
    client = NetworkClient(ctx)
    # As nova: the user's token creates the port, an admin client binds it to the host
    # (binding:host_id is admin-only in neutron's policy).
    admin = NetworkClient(None)
    kept = _kept_ports(admin, instance, requested) if reuse else {}
    plugged = {p["id"] for p in kept.values() if p.get("status") == "ACTIVE"}
    for req in requested:  # the user's ports are theirs to keep, not to match a network
        kept.pop(req.get("port_id"), None)
    sg_ids = (instance.request_spec or {}).get("security_group_ids") or []
    for req in requested:
        if req.get("port_id"):
            _stop_if_deleted(instance.uuid, is_live)
            port = admin.update_port(req["port_id"], binding(instance, host))
            vifs.append(_vif(port, req.get("network_name") or "", False, req.get("tag")))
            _check_bound(port)
            continue
        earlier = _take_kept(kept, req)
        if earlier is not None:
            # An earlier attempt's port: the server's, with its address and any
            # floating IP the user put on it meanwhile. Bound here, not made again.
            _stop_if_deleted(instance.uuid, is_live)
            port = admin.update_port(earlier["id"], binding(instance, host))
            vifs.append(_vif(port, req.get("network_name") or "", True, req.get("tag")))
            _check_bound(port)
            continue
        body = {"network_id": req["network_id"], "admin_state_up": True,
                "device_id": instance.uuid,
                "device_owner": f"compute:{instance.availability_zone}"}
        if sg_ids:
            body["security_groups"] = sg_ids
        if not ctx.auth_token:  # a service token (recovery): keep the port in the project
            body["project_id"] = instance.project_id
        if req.get("fixed_ip"):
            body["fixed_ips"] = [{"ip_address": req["fixed_ip"]}]
        if req.get("dns_domain") and _DNS_LABEL.match(instance.hostname or ""):
            # As nova: on a network with a dns_domain the port is named after the server,
            # so the network's DNS answers <hostname>.<dns_domain> (a name neutron would
            # refuse, e.g. all digits, leaves the port unnamed rather than fail the build).
            body["dns_name"] = instance.hostname
        port = client.create_port(body)
        vifs.append(_vif(port, req.get("network_name") or "", True, req.get("tag")))
        _stop_if_deleted(instance.uuid, is_live)  # never bind a port of a server already deleted
        port = admin.update_port(port["id"], {"binding:host_id": host})
        vifs[-1] = _vif(port, req.get("network_name") or "", True, req.get("tag"))
        _check_bound(port)
    for port_id in kept:
        # The server's, yet no request of it asks for it (a duplicate an interrupted
        # attempt made): it would show as one more interface.
        if admin.delete_port(port_id):
            LOG.info("Deleted port %s of %s: no requested network of the server is "
                     "left for it", port_id, instance.uuid)
    if vifs:
        _stop_if_deleted(instance.uuid, is_live)
    return plugged & {v["port_id"] for v in vifs}


def _kept_ports(admin, instance, requested: list) -> dict[str, dict]:
    """A rescheduled or resumed build: the ports earlier attempts left on
    the server (device_id = its id), as nova's _build_networks_for_instance finds them
    allocated after a reschedule. The user's own ports are in it too when still bound."""
    if not requested:
        return {}
    return {p["id"]: p for p in admin.list_ports(device_id=instance.uuid)}


def _take_kept(kept: dict, req: dict) -> dict | None:
    """The kept port that answers ``req`` (same network; the fixed IP it asks for), taken
    out of ``kept``."""
    for port_id, port in kept.items():
        if port["network_id"] != req["network_id"]:
            continue
        if req.get("fixed_ip") and req["fixed_ip"] not in {
                ip["ip_address"] for ip in port.get("fixed_ips", [])}:
            continue
        return kept.pop(port_id)
    return None


def _check_bound(port: dict) -> None:
    """The network service could not bind the port on this host (nova's
    PortBindingFailed): the build fails here and is rescheduled."""
    if port.get("binding:vif_type") == "binding_failed":
        raise PortBindingFailed(f"Binding failed for port {port['id']}, please check "
                                "neutron logs for more information.")


def _stop_if_deleted(instance_uuid: str, is_live=None) -> None:
    """A server deleted while its ports were being made: stop now, so the build's undo
    deletes them at once instead of after the wait for network-vif-plugged (the deleted
    server never gets that event), during which its subnet could not be deleted."""
    if is_live is None:
        from pocketstack.compute.instances import is_live
    if not is_live(instance_uuid):
        raise Superseded()


def refresh(ctx, vifs: list, ports_fresh: bool = False) -> list:
    """Re-read the ports (IPs from SLAAC subnets may be filled in after creation) and the
    floating IPs on them (nova's network info cache: a server shows them in addresses).
    ``ports_fresh``: the vifs are the network's answers to this build's binding updates,
    a few milliseconds old; only the floating IPs are read."""
    client = NetworkClient(ctx)
    out = []
    for vif in vifs:
        port = None if ports_fresh else client.get_port(vif["port_id"])
        out.append(_vif(port, vif["network_name"], vif["created"], vif.get("tag"))
                   if port else dict(vif, fixed_ips=[dict(ip) for ip in vif["fixed_ips"]]))
    # One listing for every port (neutron: a repeated filter means "any of").
    floating = client.list_floatingips(port_id=[v["port_id"] for v in out]) if out else []
    for vif in out:
        for ip in vif["fixed_ips"]:
            ip["floating_ips"] = [f["floating_ip_address"] for f in floating
                                  if f.get("port_id") == vif["port_id"]
                                  and f.get("fixed_ip_address") == ip["ip_address"]]
    return out


def refresh_floating_ips(ctx, infos: dict[str, list], chunk: int = 100) -> dict[str, list]:
    """``infos``: server id -> its network info. Returns, for the servers whose floating
    IPs are not what the network service has now, their network info with those; one
    listing per ``chunk`` ports (neutron: a repeated port_id filter means "any of")."""
    client = NetworkClient(ctx, as_service=True)
    port_ids = [v["port_id"] for vifs in infos.values() for v in vifs]
    floating: list = []
    for start in range(0, len(port_ids), chunk):
        floating += client.list_floatingips(port_id=port_ids[start:start + chunk])
    changed = {}
    for uuid, vifs in infos.items():
        fresh = [dict(v, fixed_ips=[dict(ip, floating_ips=[
            f["floating_ip_address"] for f in floating
            if f.get("port_id") == v["port_id"]
            and f.get("fixed_ip_address") == ip["ip_address"]])
            for ip in v.get("fixed_ips") or []]) for v in vifs]
        if fresh != vifs:
            changed[uuid] = fresh
    return changed


def deallocate(ctx, instance_uuid: str, vifs: list | None, user_port_ids=(),
               use_service_token: bool = False,
               requested_networks_empty: bool = False,
               only_host: str | None = None) -> list[str]:
    """Undo: delete created ports, unbind the user's; also any port still carrying our
    device_id (a crash between create and record). Returns what it did, for the trace.

    ``only_host``: undo just what a build attempt on that host holds — the ports it
    recorded, while still bound to it. A newer attempt (a reschedule after the build
    deadline) may meanwhile own the server's other ports, and the user's port, elsewhere.
    """
    if not vifs and requested_networks_empty:
        return []  # booted with no networks: no port can exist, skip the network service
    client = NetworkClient(ctx, as_service=use_service_token)
    admin = NetworkClient(None)
    user_ports = set(user_port_ids)
    done = []
    seen = set()
    found = []
    if only_host is None:
        try:
            # Only the ids (neutron's fields): the network service then reads no more.
            found = client.list_ports(device_id=instance_uuid, fields="id")
        except Exception as error:  # noqa: BLE001 - fall back to what we recorded
            LOG.warning("Listing ports of %s failed: %s", instance_uuid, error)
    ports = [{"port_id": p["id"]} for p in found] + list(vifs or [])
    for vif in ports:
        port_id = vif["port_id"]
        if port_id in seen:
            continue
        seen.add(port_id)
        if only_host is not None and not _bound_to(admin, port_id, only_host):
            continue
        if port_id in user_ports or vif.get("created") is False:
            try:
                admin.update_port(port_id, {"device_id": "", "device_owner": "",
                                            "binding:host_id": ""})
                done.append(f"unbound {port_id}")
            except Exception as error:  # noqa: BLE001
                LOG.warning("Unbinding port %s failed: %s", port_id, error)
        else:
            try:
                if client.delete_port(port_id):
                    done.append(f"deleted {port_id}")
            except Exception as error:  # noqa: BLE001
                LOG.warning("Deleting port %s failed: %s", port_id, error)
    return done


def _bound_to(admin, port_id: str, host: str) -> bool:
    """The port exists and is bound to ``host`` (or to no host yet)."""
    try:
        port = admin.get_port(port_id)
    except Exception as error:  # noqa: BLE001 - leave it: the newer owner cleans up
        LOG.warning("Reading port %s failed: %s", port_id, error)
        return False
    return port is not None and port.get("binding:host_id") in ("", None, host)
