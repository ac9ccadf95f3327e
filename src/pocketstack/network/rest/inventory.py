"""/v2.0/agents (network/agents.py), /v2.0/availability_zones, /v2.0/service-providers,
/v2.0/network-ip-availabilities (network/inventory.py) and /v2.0/segments
(network/segments.py)."""
from pocketstack.network import agents, inventory, l3_scheduling, segments
from pocketstack.network.rest import common


def _listed(req, key: str, items: list[dict]):
    return common.ok({key: [common.select(i, req) for i in items]})


def _filters(req) -> dict[str, list[str]]:
    return {k: v for k, v in common.params(req).items()
            if k not in ("fields", "limit", "marker", "sort_key", "sort_dir", "page_reverse")}


def list_agents(req):
    return _listed(req, "agents", agents.list_agents(req.context, _filters(req)))


def show_agent(req):
    return common.ok({"agent": common.select(
        agents.get_agent(req.context, req.params["agent_id"]), req)})


def update_agent(req):
    return common.ok({"agent": agents.update_agent(req.context, req.params["agent_id"],
                                                      common.body(req))})


def delete_agent(req):
    agents.delete_agent(req.context, req.params["agent_id"])
    return common.deleted()


def list_agent_networks(req):
    return _listed(req, "networks", agents.networks_on_dhcp_agent(req.context,
                                                                  req.params["agent_id"]))


def list_network_agents(req):
    return _listed(req, "agents", agents.dhcp_agents_hosting_network(
        req.context, req.params["network_id"]))


def list_agent_routers(req):
    return _listed(req, "routers", l3_scheduling.routers_on_agent(
        req.context, req.params["agent_id"]))


def add_agent_router(req):
    l3_scheduling.add_router_to_agent(req.context, req.params["agent_id"], common.body(req))
    return common.created({})


def remove_agent_router(req):
    l3_scheduling.remove_router_from_agent(req.context, req.params["agent_id"],
                                           req.params["router_id"])
    return common.deleted()


def list_router_agents(req):
    return _listed(req, "agents", l3_scheduling.agents_hosting_router(
        req.context, req.params["router_id"]))


def list_availability_zones(req):
    return _listed(req, "availability_zones",
                   inventory.list_availability_zones(req.context, _filters(req)))


def list_service_providers(req):
    return _listed(req, "service_providers",
                   inventory.list_service_providers(req.context, _filters(req)))


def list_ip_availabilities(req):
    return _listed(req, "network_ip_availabilities",
                   inventory.list_ip_availabilities(req.context, _filters(req)))


def show_ip_availability(req):
    return common.ok({"network_ip_availability": common.select(
        inventory.get_ip_availability(req.context, req.params["network_id"]), req)})


def list_segments(req):
    return _listed(req, "segments", segments.list_segments(req.context, _filters(req)))


def show_segment(req):
    return common.ok({"segment": common.select(
        segments.get_segment(req.context, req.params["segment_id"]), req)})


def create_segment(req):
    return common.created({"segment": segments.create_segment(req.context, common.body(req))})


def update_segment(req):
    return common.ok({"segment": segments.update_segment(
        req.context, req.params["segment_id"], common.body(req))})


def delete_segment(req):
    segments.delete_segment(req.context, req.params["segment_id"])
    return common.deleted()
