"""A server's trace read as requests: each step's words (what it does, not its internal
name), its start relative to its request, and the gaps between steps (time in message
queues and hand-offs). Shared by `pocketstack trace` and the dashboard's waterfall."""
from __future__ import annotations

# What each recorded step does (the rows are nova's instance action events, whose names
# are kept as they are for `openstack server event show`).
STEP_LABELS = {
    "api_validate": "check the request: flavor, image, networks, quota",
    "api_create": "record the server and its build request",
    "api_delete": "accept the delete",
    "api_resize": "accept the resize",
    "api_confirm_resize": "accept the resize confirmation",
    "api_revert_resize": "accept the resize revert",
    "api_attach_interface": "accept the interface attach",
    "api_detach_interface": "accept the interface detach",
    "conductor_schedule_and_build_instances": "plan the build",
    "scheduler_select_destinations": "pick a host: filter and weigh the hosts",
    "scheduler_claim_resources": "claim CPU, RAM and disk on the host",
    "conductor_cast_build": "send the build to the chosen host",
    "conductor_reschedule": "reschedule the build to another host",
    "conductor_build_timeout": "give up on a build past its deadline",
    "conductor_migrate_server": "plan the move to another host",
    "compute__do_build_and_run_instance": "build and run the server on the host",
    "compute_get_image": "fetch the image into the host's cache",
    "compute_allocate_network": "create the ports: MAC, fixed IPs, DHCP entries",
    "compute_wait_vif_plugged": "wait for the network's vif-plugged event",
    "compute_refresh_network_info": "read the ports and floating IPs back (network info)",
    "compute_prep_block_device": "attach the volumes",
    "compute_spawn": "define and start the guest",
    "compute_cleanup": "clean up after a failed build",
    "compute_terminate_instance": "stop the guest, free ports and resources",
    "compute_snapshot_instance": "snapshot the disk into an image",
    "api_snapshot_instance": "snapshot the volumes into an image",
    "compute_rebuild_instance": "rebuild the guest from an image",
    "compute_prep_resize": "prepare the resize on the target host",
    "compute_resize_instance": "move the disk to the target host",
    "compute_finish_resize": "start the guest on the target host",
    "compute_confirm_resize": "free the source host",
    "compute_revert_resize": "stop the guest on the target host",
    "compute_finish_revert_resize": "start the guest on the source host again",
    "compute_attach_interface": "plug a new port into the guest",
    "compute_detach_interface": "unplug a port from the guest",
    "compute_network_vif_deleted": "forget a port the network deleted",
    "compute_extend_volume": "grow the guest's disk to its volume's new size",
}
GAP_MS = 0.5  # shorter pauses between steps are not worth a row


def label(event: str) -> str:
    """What the step does, in words (unknown names: their words, underscores dropped)."""
    if event in STEP_LABELS:
        return STEP_LABELS[event]
    if event.startswith("api_") and event[4:].strip("_"):  # nova-api took the request
        return "accept the " + " ".join(part for part in event[4:].split("_") if part)
    words = " ".join(part for part in event.split("_") if part)
    return words or "(unnamed step)"


def steps_with_gaps(events: list[dict]) -> list[dict]:
    """One request's events as rows relative to its first step, with a ``gap`` row
    wherever nothing was running for more than GAP_MS."""
    if not events:
        return []
    t0 = min(e["offset_ms"] for e in events)
    rows: list[dict] = []
    busy_until = None
    previous = None
    for e in sorted(events, key=lambda e: e["offset_ms"]):
        start = e["offset_ms"] - t0
        if busy_until is not None and start - busy_until > GAP_MS:
            if previous["service"] != e["service"]:
                what = (f"hand-off {previous['service']} → {e['service']} "
                        "(RPC message queued, waiting for a worker)")
            else:
                what = f"waiting inside {e['service']} (no step recorded)"
            rows.append({"kind": "gap", "label": what, "start_ms": round(busy_until, 3),
                         "duration_ms": round(start - busy_until, 3)})
        rows.append({"kind": "step", "step": e["step"], "label": label(e["step"]),
                     "service": e["service"], "host": e["host"],
                     "start_ms": round(start, 3), "duration_ms": e["duration_ms"],
                     "result": e["result"], "detail": e["detail"] or ""})
        end = start + e["duration_ms"]
        busy_until = end if busy_until is None else max(busy_until, end)
        previous = e
    return rows


def requests(trace: dict) -> list[dict]:
    """The trace grouped by request (create, stop, delete …), oldest first."""
    actions = {a["request_id"]: a for a in trace.get("actions", [])}
    groups: dict[str, list[dict]] = {}
    for e in trace["events"]:
        groups.setdefault(e["request_id"], []).append(e)
    out = []
    for request_id, events in sorted(groups.items(), key=lambda g: min(
            e["offset_ms"] for e in g[1])):
        rows = steps_with_gaps(events)
        total = max((r["start_ms"] + r["duration_ms"] for r in rows), default=0.0)
        action = actions.get(request_id, {})
        out.append({"request_id": request_id, "action": action.get("action", ""),
                    "start_time": action.get("start_time"), "total_ms": round(total, 3),
                    "steps": rows})
    return out
