"""Resource fit (nova's RAM/Core/Disk filters, as placement does them): free = total ×
allocation ratio − used."""
import collections

from pocketstack.compute.scheduler.filters.base import Filter


def need(spec):
    f = spec["flavor"]
    # A server booted from a volume keeps its root disk in the volume service (nova's is_bfv)
    root = 0 if spec.get("is_bfv") else f["root_gb"]
    return f["vcpus"], f["memory_mb"], root + f["ephemeral_gb"] + (f["swap"] + 1023) // 1024


class ResourceFitFilter(Filter):
    name = "resource fit"

    def reject(self, host, spec, context):
        vcpus, ram, disk = need(spec)
        if host.free_ram_mb < ram:
            return "ram"
        if host.free_vcpus < vcpus:
            return "vcpus"
        if host.free_disk_gb < disk:
            return "disk"
        return None

    def explain(self, reasons, spec, hosts):
        vcpus, ram, disk = need(spec)
        what = collections.Counter(reasons).most_common(1)[0][0]
        if what == "ram":
            best = max(hosts, key=lambda h: h.free_ram_mb)
            detail = f"need {ram} MB RAM, most free is {max(best.free_ram_mb, 0)} MB on {best.host}"
        elif what == "vcpus":
            best = max(hosts, key=lambda h: h.free_vcpus)
            detail = f"need {vcpus} vCPUs, most free is {max(best.free_vcpus, 0)} on {best.host}"
        else:
            best = max(hosts, key=lambda h: h.free_disk_gb)
            detail = (f"need {disk} GB disk, most free is {max(best.free_disk_gb, 0)} GB "
                      f"on {best.host}")
        return f"{self.name} removed {len(reasons)} ({detail})"
