"""The server page's waterfalls: a server's trace as one waterfall per request (the boot
first), each on its own time axis with the gaps between steps, in the words of
`pocketstack trace`; the boot path; and a NoValidHost fault message split into one row per
scheduler filter."""
from __future__ import annotations

import re

from pocketstack.common import config, trace_steps

# Each request under the `openstack` command that makes it (nova's instance action names
# otherwise, as `server <action>`).
CLI_NAMES = {"create": "server create", "delete": "server delete", "stop": "server stop",
             "start": "server start", "reboot": "server reboot", "resize": "server resize",
             "confirmResize": "server resize confirm", "revertResize": "server resize revert",
             "createImage": "server image create", "attach_volume": "server add volume",
             "detach_volume": "server remove volume", "attach_interface": "server add port",
             "detach_interface": "server remove port", "rebuild": "server rebuild",
             "migrate": "server migrate", "live-migration": "server migrate --live",
             "resetState": "server set --state", "restore": "server restore",
             "forceDelete": "server delete --force", "changePassword": "server set --password",
             "extend_volume": "volume set --size"}

# Steps that first wait for the guest to power off on its own (ACPI), up to [libvirt]
# shutdown_timeout, before forcing it: a soft reboot or a stop of a guest that ignores the
# power button spends that whole timeout waiting.
SHUTDOWN_WAITS = {"compute_reboot_instance": "the guest to shut down for a soft reboot",
                  "compute_power_off_instance": "the guest to shut down"}
MOSTLY = 0.5  # a share of the request's time above which it is "mostly a timeout"


def cli_name(action: str) -> str:
    return CLI_NAMES.get(action, f"server {action}" if action else "request")


def _shutdown_timeout() -> float:
    try:
        return float(config.CONF.libvirt.shutdown_timeout)
    except AttributeError:  # oslo.config's NoSuchOptError: no compute options here
        return 60.0


def timeout_note(rows: list[dict], total_ms: float) -> str | None:
    """Say so when most of a request's time went into waiting out the shutdown timeout."""
    timeout_ms = _shutdown_timeout() * 1000
    for row in rows:
        waited = SHUTDOWN_WAITS.get(row.get("step", ""))
        if waited and timeout_ms and row["duration_ms"] >= timeout_ms \
                and row["duration_ms"] > MOSTLY * total_ms:
            return (f"mostly a timeout: {timeout_ms / 1000:g} s of it waited for {waited} "
                    f"([libvirt] shutdown_timeout) before forcing it off")
    return None


def requests(trace: dict) -> list[dict]:
    """One waterfall per request, oldest (the boot) first, each on its own time axis:
    [{"title" (the CLI's name), "open", "timeout", "request_id", "total_ms",
    "rows": [{kind "step"|"gap", label, service, host, start_ms, duration_ms, result,
    detail, left, width, failed}]}] — the rows and their words are `pocketstack trace`'s,
    positioned in percent of the request's total."""
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
        out.append({"title": cli_name(action),
                    "action": action, "request_id": req["request_id"],
                    "start_time": req["start_time"], "total_ms": req["total_ms"],
                    "rows": rows, "steps": sum(r["kind"] == "step" for r in rows),
                    "failed": any(r["failed"] for r in rows),
                    "timeout": timeout_note(rows, req["total_ms"])})
    # The boot (the first create, else the oldest request) is shown open, the others as
    # one line each.
    boot = next((r for r in out if r["action"] == "create"), out[0] if out else None)
    for r in out:
        r["open"] = r is boot
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
