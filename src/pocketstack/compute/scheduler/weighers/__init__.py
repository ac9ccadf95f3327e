"""Weighers (nova's): each scores hosts, scores are normalized to 0..1 over the candidate
hosts and summed with the configured multipliers; the highest total wins."""
from __future__ import annotations

from pocketstack.common import config


def _normalize(values: list[float]) -> list[float]:
    lo, hi = min(values), max(values)
    if hi == lo:
        return [0.0] * len(values)
    span = hi - lo
    return [(v - lo) / span for v in values]


def resource_parts() -> list[tuple[float, str]]:
    """(multiplier, host attribute) of the weighers every request uses, in the order their
    scores are summed (host_state.best sums them the same way in SQL)."""
    conf = config.CONF.scheduler
    return [(conf.ram_weight_multiplier, "free_ram_mb"),
            (conf.disk_weight_multiplier, "free_disk_gb"),
            (conf.cpu_weight_multiplier, "free_vcpus"),
            (-conf.build_failure_weight_multiplier, "failed_builds")]


def weigh(hosts: list, spec: dict, context: dict) -> list:
    """Hosts sorted best first."""
    if len(hosts) < 2:
        return list(hosts)
    conf = config.CONF.scheduler
    scores = [0.0] * len(hosts)
    parts = [(multiplier, [getattr(h, attr) for h in hosts])
             for multiplier, attr in resource_parts()]
    policy = (spec.get("group") or {}).get("policy")
    counts = context.get("group_host_counts") or {}
    if policy == "soft-affinity":
        parts.append((conf.soft_affinity_weight_multiplier,
                      [counts.get(h.host, 0) for h in hosts]))
    elif policy == "soft-anti-affinity":
        parts.append((-conf.soft_anti_affinity_weight_multiplier,
                      [counts.get(h.host, 0) for h in hosts]))
    for multiplier, values in parts:
        if not multiplier:
            continue
        for i, v in enumerate(_normalize(values)):
            scores[i] += multiplier * v
    order = sorted(range(len(hosts)), key=scores.__getitem__, reverse=True)
    return [hosts[i] for i in order]
