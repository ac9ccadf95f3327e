"""os-interface: attach and detach ports on a running server (nova's attach_interface /
detach_interface). The API validates what it can with the user's token — the port exists
and is free, the network exists and is usable, the fixed IP is free — so a user gets
nova's 4xx instead of a failure on the host; the host then creates or binds the port,
waits for network-vif-plugged and records the interface (compute/manager/interfaces.py).
"""
from __future__ import annotations

from pocketstack.common import db, exceptions
from pocketstack.compute import instances, states, trace
from pocketstack.clients.network import NetworkClient
from pocketstack.compute.trace import Step

OK_VM_STATES = (states.ACTIVE, states.PAUSED, states.STOPPED)


def _check(ctx, inst, action: str) -> None:
    from pocketstack.compute.guards import check_locked, host_up, invalid_state

    check_locked(ctx, inst)
    if inst.vm_state not in OK_VM_STATES:
        raise invalid_state(inst, action)
    if inst.task_state is not None:
        raise invalid_state(inst, action, "task_state")
    if not host_up(inst.host):
        raise exceptions.Conflict(f"Cannot '{action}' instance {inst.uuid}: its compute host "
                                  f"{inst.host or '-'} is not up.")


def _request(ctx, inst, net_id, port_id, fixed_ip, tag) -> dict:
    client = NetworkClient(ctx)
    if port_id:
        port = client.get_port(port_id)
        if port is None:
            raise exceptions.NotFound(f"Port {port_id} could not be found.")
        if port.get("device_id"):
            raise exceptions.Conflict(f"Port {port_id} is still in use.")
        net = client.get_network(port["network_id"]) or {}
        return {"port_id": port_id, "network_id": port["network_id"],
                "network_name": net.get("name", ""), "tag": tag}
    if net_id:
        net = client.get_network(net_id)
        if net is None:
            raise exceptions.NotFound(f"Network {net_id} could not be found.")
    else:
        from pocketstack.compute.api import _visible_networks

        nets = _visible_networks(client, ctx.project_id)
        if not nets:
            raise exceptions.BadRequest("No specific network was requested and none are "
                                        f"available for project '{ctx.project_id}'.")
        if len(nets) > 1:
            raise exceptions.BadRequest("Multiple possible networks found, use a Network ID "
                                        "to be more specific.")
        net = nets[0]
    if not net.get("subnets"):
        raise exceptions.BadRequest(f"Network {net['id']} requires a subnet in order to boot "
                                    "instances on.")
    if fixed_ip:
        used = client.list_ports(network_id=net["id"], fixed_ips=f"ip_address={fixed_ip}")
        if used:
            raise exceptions.Conflict(f"Fixed IP address {fixed_ip} is already in use on "
                                      f"instance {used[0].get('device_id') or 'a port'}.")
    return {"network_id": net["id"], "network_name": net.get("name", ""),
            "fixed_ip": fixed_ip, "tag": tag}


def attach(ctx, inst, net_id=None, port_id=None, fixed_ip=None, tag=None) -> dict:
    """Attach; returns the vif the host recorded (a synchronous call, as nova's)."""
    from pocketstack.compute.actions import compute_rpc

    _check(ctx, inst, "attach_interface")
    request = _request(ctx, inst, net_id, port_id, fixed_ip, tag)
    with db.transaction() as s:
        trace.start_action(s, ctx, inst.uuid, "attach_interface")
        trace.store(s, [Step(ctx, inst.uuid, "api_attach_interface", "api", None,
                             request.get("port_id") or f"new port on "
                             f"{request['network_name'] or request['network_id']}").done()])
    return compute_rpc.attach_interface(ctx, inst.host, inst.uuid, request)


def detach(ctx, inst, port_id: str) -> None:
    from pocketstack.compute.actions import compute_rpc

    if not any(v["port_id"] == port_id for v in inst.network_info or []):
        raise exceptions.NotFound(f"Port {port_id} is not attached")
    _check(ctx, inst, "detach_interface")
    with db.transaction() as s:
        trace.start_action(s, ctx, inst.uuid, "detach_interface")
        trace.store(s, [Step(ctx, inst.uuid, "api_detach_interface", "api", None,
                             port_id).done()])
    compute_rpc._host(inst.host).cast(ctx, "detach_interface", instance_uuid=inst.uuid,
                                      port_id=port_id)


def get_instance(ctx, uuid: str):
    return instances.get(ctx, uuid)
