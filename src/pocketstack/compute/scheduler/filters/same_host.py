"""SameHostFilter / DifferentHostFilter (hints same_host, different_host), and
SharedStorageFilter (a moved real guest: the hosts that see its disks)."""
from pocketstack.compute.scheduler.filters.base import Filter


class SameHostFilter(Filter):
    name = "SameHostFilter"

    def applies(self, spec):
        return bool((spec.get("hints") or {}).get("same_host"))

    def reject(self, host, spec, context):
        if host.host not in context.get("same_hosts", set()):
            return f"{host.host} holds none of the servers named in same_host"
        return None


class DifferentHostFilter(Filter):
    name = "DifferentHostFilter"

    def applies(self, spec):
        return bool((spec.get("hints") or {}).get("different_host"))

    def reject(self, host, spec, context):
        if host.host in context.get("different_hosts", set()):
            return f"{host.host} holds a server named in different_host"
        return None


class SharedStorageFilter(Filter):
    """A resize or cold migration of a real guest: only hosts sharing its host's instance
    storage (the request's storage_hosts) can take its disks."""
    name = "SharedStorageFilter"

    def applies(self, spec):
        return spec.get("storage_hosts") is not None

    def reject(self, host, spec, context):
        if host.host not in spec["storage_hosts"]:
            return f"{host.host} does not share the guest's instance storage"
        return None
