from pocketstack.compute.scheduler.filters.base import Filter


class AvailabilityZoneFilter(Filter):
    name = "AvailabilityZoneFilter"

    def applies(self, spec):
        return bool(spec.get("availability_zone"))

    def reject(self, host, spec, context):
        if host.az != spec["availability_zone"]:
            return f"{host.host} is in zone {host.az}, not {spec['availability_zone']}"
        return None
