"""Neutron v2.0 route table: one line per URL, handlers in one module per noun."""
from pocketstack.network.rest import (address_scopes, discovery, extensions, floatingips,
                                      inventory, networks, ports, quotas, routers,
                                      security_groups, subnetpools, subnets, tags, trunks)

_ROUTES = {
    "/": {"GET": discovery.versions},
    "/v2.0": {"GET": discovery.v2},
    "/v2.0/extensions": {"GET": extensions.list_extensions},
    "/v2.0/extensions/{alias}": {"GET": extensions.get_extension},
    "/v2.0/networks": {"GET": networks.list_networks, "POST": networks.create_network},
    "/v2.0/networks/{network_id}": {"GET": networks.show_network,
                                    "PUT": networks.update_network,
                                    "DELETE": networks.delete_network},
    "/v2.0/subnets": {"GET": subnets.list_subnets, "POST": subnets.create_subnet},
    "/v2.0/subnets/{subnet_id}": {"GET": subnets.show_subnet, "PUT": subnets.update_subnet,
                                  "DELETE": subnets.delete_subnet},
    "/v2.0/subnetpools": {"GET": subnetpools.list_subnetpools,
                          "POST": subnetpools.create_subnetpool},
    "/v2.0/subnetpools/{subnetpool_id}": {"GET": subnetpools.show_subnetpool,
                                          "PUT": subnetpools.update_subnetpool,
                                          "DELETE": subnetpools.delete_subnetpool},
    "/v2.0/address-scopes": {"GET": address_scopes.list_address_scopes,
                             "POST": address_scopes.create_address_scope},
    "/v2.0/address-scopes/{address_scope_id}": {
        "GET": address_scopes.show_address_scope, "PUT": address_scopes.update_address_scope,
        "DELETE": address_scopes.delete_address_scope},
    "/v2.0/ports": {"GET": ports.list_ports, "POST": ports.create_port},
    "/v2.0/ports/{port_id}": {"GET": ports.show_port, "PUT": ports.update_port,
                              "DELETE": ports.delete_port},
    "/v2.0/security-groups": {"GET": security_groups.list_groups,
                              "POST": security_groups.create_group},
    "/v2.0/security-groups/{group_id}": {"GET": security_groups.show_group,
                                         "PUT": security_groups.update_group,
                                         "DELETE": security_groups.delete_group},
    "/v2.0/security-group-rules": {"GET": security_groups.list_rules,
                                   "POST": security_groups.create_rule},
    "/v2.0/security-group-rules/{rule_id}": {"GET": security_groups.show_rule,
                                             "PUT": security_groups.update_rule,
                                             "DELETE": security_groups.delete_rule},
    "/v2.0/routers": {"GET": routers.list_routers, "POST": routers.create_router},
    "/v2.0/routers/{router_id}": {"GET": routers.show_router, "PUT": routers.update_router,
                                  "DELETE": routers.delete_router},
    "/v2.0/routers/{router_id}/add_router_interface": {"PUT": routers.add_interface},
    "/v2.0/routers/{router_id}/remove_router_interface": {"PUT": routers.remove_interface},
    "/v2.0/floatingips": {"GET": floatingips.list_floatingips,
                          "POST": floatingips.create_floatingip},
    "/v2.0/floatingips/{floatingip_id}": {"GET": floatingips.show_floatingip,
                                          "PUT": floatingips.update_floatingip,
                                          "DELETE": floatingips.delete_floatingip},
    "/v2.0/agents": {"GET": inventory.list_agents},
    "/v2.0/agents/{agent_id}": {"GET": inventory.show_agent},
    "/v2.0/availability_zones": {"GET": inventory.list_availability_zones},
    "/v2.0/service-providers": {"GET": inventory.list_service_providers},
    "/v2.0/network-ip-availabilities": {"GET": inventory.list_ip_availabilities},
    "/v2.0/network-ip-availabilities/{network_id}": {"GET": inventory.show_ip_availability},
    "/v2.0/segments": {"GET": inventory.list_segments},
    "/v2.0/segments/{segment_id}": {"GET": inventory.show_segment},
    "/v2.0/floatingips/{floatingip_id}/port_forwardings": {
        "GET": floatingips.list_port_forwardings, "POST": floatingips.create_port_forwarding},
    "/v2.0/floatingips/{floatingip_id}/port_forwardings/{port_forwarding_id}": {
        "GET": floatingips.show_port_forwarding, "PUT": floatingips.update_port_forwarding,
        "DELETE": floatingips.delete_port_forwarding},
    "/v2.0/trunks": {"GET": trunks.list_trunks, "POST": trunks.create_trunk},
    "/v2.0/trunks/{trunk_id}": {"GET": trunks.show_trunk, "PUT": trunks.update_trunk,
                                "DELETE": trunks.delete_trunk},
    "/v2.0/trunks/{trunk_id}/add_subports": {"PUT": trunks.add_subports},
    "/v2.0/trunks/{trunk_id}/remove_subports": {"PUT": trunks.remove_subports},
    "/v2.0/trunks/{trunk_id}/get_subports": {"GET": trunks.get_subports},
    "/v2.0/quotas": {"GET": quotas.list_quotas},
    "/v2.0/quotas/tenant": {"GET": quotas.show_tenant},
    "/v2.0/quotas/{project_id}": {"GET": quotas.show_quota, "PUT": quotas.update_quota,
                                  "DELETE": quotas.delete_quota},
    "/v2.0/quotas/{project_id}/default": {"GET": quotas.show_default},
    "/v2.0/quotas/{project_id}/details": {"GET": quotas.show_details},
    "/v2.0/{collection}/{resource_id}/tags": {"GET": tags.list_tags, "PUT": tags.replace_tags,
                                              "POST": tags.add_tags,
                                              "DELETE": tags.delete_tags},
    "/v2.0/{collection}/{resource_id}/tags/{tag}": {"GET": tags.check_tag,
                                                    "PUT": tags.add_tag,
                                                    "DELETE": tags.delete_tag},
}


def _with_json_suffix(routes: dict) -> dict:
    """Neutron accepts ``.json`` after any path (``/v2.0/networks.json``,
    ``/v2.0/quotas/{id}/details.json``). The suffixed forms come first, so that
    ``{network_id}.json`` is not read as an id."""
    suffixed = {f"{path}.json": methods for path, methods in routes.items() if path != "/"}
    return {**suffixed, **routes}


ROUTES = _with_json_suffix(_ROUTES)
