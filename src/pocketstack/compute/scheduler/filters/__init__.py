"""Scheduler filters (nova's names). Each filter gets the request spec and the host list and
returns the hosts that pass plus, for every host it removed, a short reason a user can act
on; the scheduler turns those into the NoValidHost message. ``applies(spec)`` lets a filter
step aside for requests it has nothing to say about, so the common boot runs few loops."""
from __future__ import annotations

from pocketstack.compute.scheduler.filters import (affinity, aggregate_extra_specs,
                                                   availability_zone, compute, image_props,
                                                   resources, same_host)

ALL = [compute.ComputeFilter(), compute.RetryFilter(), compute.ForcedHostFilter(),
       availability_zone.AvailabilityZoneFilter(), resources.ResourceFitFilter(),
       image_props.ImagePropertiesFilter(), affinity.ServerGroupAffinityFilter(),
       affinity.ServerGroupAntiAffinityFilter(), same_host.SameHostFilter(),
       same_host.DifferentHostFilter(), same_host.SharedStorageFilter(),
       aggregate_extra_specs.AggregateInstanceExtraSpecsFilter()]

# What the database does itself for host_state.best: enabled and up, room for the flavor,
# the zone (while no aggregate gives hosts other zones).
IN_DATABASE = (compute.ComputeFilter, resources.ResourceFitFilter,
               availability_zone.AvailabilityZoneFilter)


def database_only(spec: dict) -> bool:
    """Whether no filter but those the database applies has anything to say about ``spec``."""
    return all(isinstance(f, IN_DATABASE) or not f.applies(spec) for f in ALL)


def run(spec: dict, hosts: list, context: dict) -> tuple[list, list[str]]:
    """Filter ``hosts``; returns (passing hosts, one explanation per filter that removed any)."""
    notes = []
    for f in ALL:
        if not f.applies(spec):
            continue
        kept, removed = [], []
        for h in hosts:
            reason = f.reject(h, spec, context)
            if reason is None:
                kept.append(h)
            else:
                removed.append(reason)
        if removed:
            notes.append(f.explain(removed, spec, hosts))
        hosts = kept
        if not hosts:
            break
    return hosts, notes
