"""The network service's internal API: what compute and the CLI call (the REST handlers
call the same functions). Every function takes the caller's RequestContext and applies
the same policy and validation as the HTTP API; bodies and results are neutron's JSON
shapes, so code written against neutron's API reads the same here.

    port = api.create_port(ctx, {"port": {"network_id": net, "device_id": server,
                                          "device_owner": "compute:nova"}})["port"]
    api.update_port(admin_ctx, port["id"], {"port": {"binding:host_id": host}})
    # -> status ACTIVE, and compute receives network-vif-plugged for the server
"""
from __future__ import annotations

from pocketstack.network import (floatingips, listing, networks, port_delete, port_update, ports,
                                 quotas, routers, security_groups, subnets)

create_network = networks.create_network
get_network = networks.get_network
update_network = networks.update_network
delete_network = networks.delete_network
create_subnet = subnets.create_subnet
get_subnet = subnets.get_subnet
update_subnet = subnets.update_subnet
delete_subnet = subnets.delete_subnet
create_port = ports.create_port
get_port = ports.get_port
update_port = port_update.update_port
delete_port = port_delete.delete_port
get_security_group = security_groups.get_security_group
create_router = routers.create_router
add_router_interface = routers.add_router_interface
create_floatingip = floatingips.create_floatingip
get_quota = quotas.get_quota


def list_networks(ctx, **filters) -> list[dict]:
    return networks.list_networks(ctx, listing.params_from(filters))[0]


def list_subnets(ctx, **filters) -> list[dict]:
    return subnets.list_subnets(ctx, listing.params_from(filters))[0]


def list_ports(ctx, **filters) -> list[dict]:
    """e.g. list_ports(ctx, device_id=server_id) — filters as in GET /v2.0/ports."""
    return ports.list_ports(ctx, listing.params_from(filters))[0]


def list_security_groups(ctx, **filters) -> list[dict]:
    return security_groups.list_security_groups(ctx, listing.params_from(filters))[0]


def list_floatingips(ctx, **filters) -> list[dict]:
    return floatingips.list_floatingips(ctx, listing.params_from(filters))[0]
