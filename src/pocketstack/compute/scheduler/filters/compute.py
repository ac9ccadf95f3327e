"""ComputeFilter (enabled and up), the retry exclusion, and forced host (zone:host)."""
from pocketstack.compute.scheduler.filters.base import Filter


class ComputeFilter(Filter):
    name = "ComputeFilter"

    def reject(self, host, spec, context):
        return host.down_reason or None

    def explain(self, reasons, spec, hosts):
        shown = ", ".join(sorted(set(reasons))[:3])
        return f"{self.name} removed {len(reasons)} ({shown})"


class RetryFilter(Filter):
    """Hosts this server already failed on are not tried again."""
    name = "RetryFilter"

    def applies(self, spec):
        return bool(spec.get("tried_hosts"))

    def reject(self, host, spec, context):
        if host.host in spec["tried_hosts"]:
            return f"{host.host} already failed this build"
        return None

    def explain(self, reasons, spec, hosts):
        return f"{self.name} removed {len(reasons)} (already tried: " \
               f"{', '.join(spec['tried_hosts'])})"


class ForcedHostFilter(Filter):
    name = "ForcedHostFilter"

    def applies(self, spec):
        return bool(spec.get("force_host") or spec.get("force_node"))

    def reject(self, host, spec, context):
        if spec.get("force_host") and host.host != spec["force_host"]:
            return f"the request names host {spec['force_host']}"
        if spec.get("force_node") and host.nodename != spec["force_node"]:
            return f"the request names node {spec['force_node']}"
        return None
