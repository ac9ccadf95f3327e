"""Server group (anti-)affinity: ``context['group_hosts']`` holds the hosts of the group's
other members (loaded only when the request names a group)."""
from pocketstack.compute.scheduler.filters.base import Filter


class ServerGroupAffinityFilter(Filter):
    name = "ServerGroupAffinityFilter"

    def applies(self, spec):
        return (spec.get("group") or {}).get("policy") == "affinity"

    def reject(self, host, spec, context):
        hosts = context.get("group_hosts") or set()
        if hosts and host.host not in hosts:
            return f"the group's servers are on {', '.join(sorted(hosts))}"
        return None


class ServerGroupAntiAffinityFilter(Filter):
    name = "ServerGroupAntiAffinityFilter"

    def applies(self, spec):
        return (spec.get("group") or {}).get("policy") == "anti-affinity"

    def reject(self, host, spec, context):
        per_host = context.get("group_host_counts") or {}
        limit = int(((spec.get("group") or {}).get("rules") or {})
                    .get("max_server_per_host", 1))
        if per_host.get(host.host, 0) >= limit:
            return f"{host.host} already has a server of the group"
        return None
