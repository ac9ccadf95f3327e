"""The boot waterfall: a server's trace laid out as service lanes of positioned bars, and
a NoValidHost fault message split into one row per scheduler filter."""
from __future__ import annotations

import re

# The seed's boot path order; services not listed follow in the order they appear.
LANE_ORDER = ("api", "conductor", "scheduler", "compute", "network", "image", "volume")


def lanes(trace: dict) -> tuple[list[dict], float]:
    """[{"service", "rows": [{event..., "left", "width", "failed"}]}], total ms."""
    events = trace.get("events") or []
    total = max((e["offset_ms"] + e["duration_ms"] for e in events), default=0.0) or 1.0
    by_service: dict[str, list[dict]] = {}
    for e in events:
        left = min(e["offset_ms"] / total * 100, 99.5)
        row = dict(e, left=round(left, 2),
                   width=round(max(e["duration_ms"] / total * 100, 0.5), 2),
                   failed=e.get("result") not in (None, "Success"))
        row["width"] = min(row["width"], round(100 - row["left"], 2))
        by_service.setdefault(e["service"] or "other", []).append(row)
    known = [s for s in LANE_ORDER if s in by_service]
    rest = [s for s in by_service if s not in LANE_ORDER]
    return [{"service": s, "rows": by_service[s]} for s in known + rest], total


_NOTE = re.compile(r"^(?P<filter>.+?) removed (?P<count>\d+)(?: \((?P<why>.*)\))?$", re.S)


def _split_top_level(text: str) -> list[str]:
    """Split on '; ' outside parentheses (a filter's reason may itself contain '; ')."""
    parts, depth, current = [], 0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and text.startswith("; ", i):
            parts.append(current)
            current, i = "", i + 2
            continue
        current += ch
        i += 1
    return parts + [current]


def no_valid_host(message: str | None) -> dict | None:
    """{"hosts": "4 hosts", "filters": [{"filter", "removed", "reason"}]} or None."""
    prefix = "No valid host: "
    if not message or not message.startswith(prefix):
        return None
    head, *notes = _split_top_level(message[len(prefix):])
    rows = []
    for note in notes:
        m = _NOTE.match(note.strip())
        if m:
            rows.append({"filter": m["filter"], "removed": int(m["count"]),
                         "reason": m["why"] or ""})
        else:
            rows.append({"filter": "", "removed": None, "reason": note.strip()})
    return {"hosts": head, "filters": rows}


# The seed's boot path, client → keystone → nova-api → conductor → scheduler → compute →
# glance / neutron / cinder → hypervisor, and which trace steps belong to each stop.
BOOT_PATH = (
    ("keystone", lambda e: e["step"] == "api_validate"),  # the request's token was checked
    ("nova-api", lambda e: e["step"].startswith("api_")),
    ("nova-conductor", lambda e: e["step"].startswith("conductor_")),
    ("nova-scheduler", lambda e: e["step"].startswith("scheduler_")),
    ("nova-compute", lambda e: e["step"].startswith("compute_")),
    ("glance", lambda e: e["step"] == "compute_get_image"),
    # A boot without networks or volumes still records these steps: they only count when
    # they went to neutron / cinder (or failed).
    ("neutron", lambda e: (e["step"] == "compute_allocate_network"
                           and e.get("detail") != "no networks requested")
     or (e["step"] == "compute_wait_vif_plugged" and _failed(e))),
    ("cinder", lambda e: e["step"] in ("compute_create_volume", "compute_attach_volume")
     or (e["step"] == "compute_prep_block_device"
         and (_failed(e) or not (e.get("detail") or "").startswith("0 volume")))),
    ("hypervisor", lambda e: e["step"] == "compute_spawn"),
)


def _failed(event: dict) -> bool:
    return event.get("result") not in (None, "Success")


def boot_path(trace: dict) -> list[dict]:
    """[{"node", "state": "done"|"failed"|"unused", "steps": [...]}] for the path diagram."""
    events = trace.get("events") or []
    nodes = []
    for node, belongs in BOOT_PATH:
        mine = [e for e in events if belongs(e)]
        failed = any(_failed(e) for e in mine)
        state = "failed" if failed else "done" if mine else "unused"
        nodes.append({"node": node, "state": state,
                      "steps": sorted({e["step"] for e in mine})})
    return nodes
