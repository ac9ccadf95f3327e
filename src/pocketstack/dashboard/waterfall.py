"""The server page's waterfalls: a server's trace as one waterfall per request (the boot
first), each on its own time axis with the gaps between steps, in the words of
`pocketstack trace`; the boot path; and a NoValidHost fault message split into one row per
scheduler filter."""
from __future__ import annotations

import re

from pocketstack.common import trace_steps

# Request names as a user would say them (nova's instance action names otherwise).
ACTION_TITLES = {"create": "Boot", "delete": "Delete", "stop": "Stop", "start": "Start",
                 "reboot": "Reboot", "resize": "Resize", "confirmResize": "Confirm resize",
                 "revertResize": "Revert resize", "createImage": "Snapshot",
                 "attach_volume": "Attach a volume", "detach_volume": "Detach a volume",
                 "attach_interface": "Attach an interface",
                 "detach_interface": "Detach an interface", "rebuild": "Rebuild",
                 "migrate": "Migrate"}


def requests(trace: dict) -> list[dict]:
    """One waterfall per request, oldest (the boot) first, each on its own time axis:
    [{"title", "request_id", "total_ms", "rows": [{kind "step"|"gap", label, service,
    host, start_ms, duration_ms, result, detail, left, width, failed}]}] — the rows and
    their words are `pocketstack trace`'s, positioned in percent of the request's total."""
    out = []
    for req in trace_steps.requests(trace):
        total = req["total_ms"] or 1.0
        rows = []
        for row in req["steps"]:
            left = min(row["start_ms"] / total * 100, 99.5)
            width = min(max(row["duration_ms"] / total * 100, 0.5), 100 - left)
            rows.append(dict(row, left=round(left, 2), width=round(width, 2),
                             failed=row["kind"] == "step" and row.get("result") not in (
                                 None, "Success")))
        action = req["action"]
        out.append({"title": ACTION_TITLES.get(action, action or "Request"),
                    "action": action, "request_id": req["request_id"],
                    "start_time": req["start_time"], "total_ms": req["total_ms"],
                    "rows": rows, "steps": sum(r["kind"] == "step" for r in rows),
                    "failed": any(r["failed"] for r in rows)})
    return out


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
    """[{"node", "state": "done"|"failed"|"unused", "steps": [...]}] for the path diagram:
    the boot's request only (a later attach or resize is not the boot's path)."""
    events = trace.get("events") or []
    boot = [a["request_id"] for a in trace.get("actions") or [] if a.get("action") == "create"]
    if boot:
        events = [e for e in events if e.get("request_id") == boot[0]]
    nodes = []
    for node, belongs in BOOT_PATH:
        mine = [e for e in events if belongs(e)]
        failed = any(_failed(e) for e in mine)
        state = "failed" if failed else "done" if mine else "unused"
        nodes.append({"node": node, "state": state,
                      "steps": sorted({e["step"] for e in mine})})
    return nodes
