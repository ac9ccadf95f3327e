"""AggregateInstanceExtraSpecsFilter: flavor extra specs scoped
``aggregate_instance_extra_specs:`` (or unscoped) must match host aggregate metadata."""
from pocketstack.compute.scheduler.filters.base import Filter

SCOPE = "aggregate_instance_extra_specs"


def _wanted(spec):
    out = {}
    for key, value in (spec["flavor"].get("extra_specs") or {}).items():
        scope, _, name = key.partition(":")
        if name and scope == SCOPE:
            out[name] = value
        elif not name:
            out[key] = value
    return out


class AggregateInstanceExtraSpecsFilter(Filter):
    name = "AggregateInstanceExtraSpecsFilter"

    def applies(self, spec):
        return bool(_wanted(spec))

    def reject(self, host, spec, context):
        for key, value in _wanted(spec).items():
            have = {str(m[key]) for m in host.aggregates if key in m}
            wanted = str(value)
            if wanted.startswith("<in>"):
                if not any(wanted[4:].strip() in h for h in have):
                    return f"no aggregate of {host.host} has {key} containing {wanted[4:].strip()}"
            elif wanted not in have and not (wanted.startswith("s== ") and wanted[4:] in have):
                return f"no aggregate of {host.host} has {key}={wanted}"
        return None
