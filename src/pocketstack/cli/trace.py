"""`pocketstack trace SERVER`: what happened to a server, request by request, as a
waterfall — each step's start, duration, a bar, what the step does, the service and host
that ran it, and the gaps between steps (time spent in message queues and hand-offs).

Plain text that fits the terminal (80 columns when piped), colour only on a terminal;
``--format json`` gives the same data for scripts.
"""
from __future__ import annotations

import os
import shutil
import textwrap

import click

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
}
GAP_MS = 0.5  # shorter pauses between steps are not worth a row


def label(event: str) -> str:
    """What the step does, in words (unknown names: their words, underscores dropped)."""
    if event in STEP_LABELS:
        return STEP_LABELS[event]
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


def render_text(trace: dict, width: int = 80) -> list[str]:
    """The waterfall as lines of at most ``width`` columns (click.style colours, which
    click.echo drops when the output is not a terminal)."""
    width = max(60, width)
    bar_width = max(10, min(40, width - 40))
    lines = [f"server {trace['server_id']}"]
    for req in requests(trace):
        total = req["total_ms"] or 1.0
        lines.append("")
        lines.append(click.style(f"{req['action'] or 'request'} {req['request_id']}: "
                                 f"{req['total_ms']:.1f} ms", bold=True))
        lines.append(f"{'start':>9} {'took':>9}  {'':{bar_width}}  result")
        for row in req["steps"]:
            left = min(int(row["start_ms"] / total * bar_width), bar_width - 1)
            size = max(1, round(row["duration_ms"] / total * bar_width))
            size = min(size, bar_width - left)
            gap = row["kind"] == "gap"
            ok = gap or row["result"] == "Success"
            bar = " " * left + ("·" if gap else "█") * size
            bar = bar.ljust(bar_width)
            result = "" if gap else (row["result"] or "")
            colour = "bright_black" if gap else ("green" if ok else "red")
            lines.append(f"{row['start_ms']:>7.1f}ms {row['duration_ms']:>7.1f}ms  "
                         + click.style(bar, fg=colour) + f"  {result}")
            indent = " " * 4
            text = (f"(gap) {row['label']}" if gap else
                    f"{row['label']} [{row['service']}@{row['host'] or '-'}]")
            for piece in textwrap.wrap(text, width - len(indent)) or [""]:
                lines.append(indent + (click.style(piece, dim=True) if gap else piece))
            if not gap and row["detail"]:
                for piece in textwrap.wrap(row["detail"], width - 6)[:4]:
                    lines.append(" " * 6 + click.style(piece, dim=True))
    return lines


def _resolve(sess, compute_url: str, server: str) -> str:
    r = sess.get(f"{compute_url}/servers/{server}", raise_exc=False)
    if r.status_code == 200:
        return server
    r = sess.get(f"{compute_url}/servers", params={"name": f"^{server}$"}, raise_exc=False)
    matches = r.json().get("servers", []) if r.status_code == 200 else []
    if len(matches) != 1:
        raise click.ClickException(f"No unique server named {server!r} "
                                   f"({len(matches)} match).")
    return matches[0]["id"]


@click.command("trace")
@click.argument("server")
@click.option("--os-cloud", "cloud_name", default=os.environ.get("OS_CLOUD", "pocketstack"),
              help="clouds.yaml entry (default pocketstack, from the data dir); `envvars` "
                   "uses the OS_* variables.")
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None,
              help="State directory of the cloud (its clouds.yaml is looked at first).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: every request's steps and gaps, for scripts.")
@click.option("--json", "as_json", is_flag=True, hidden=True)
@click.option("--width", type=click.IntRange(60), default=None,
              help="Columns to fit (default: the terminal's, 80 when piped).")
def trace(server, cloud_name, data_dir, fmt, as_json, width):
    """Show what happened to SERVER (name or id), step by step, with timings."""
    import json

    from pocketstack.cli import clouds
    from pocketstack.cloud import default_data_dir

    sess, region = clouds.session(cloud_name, os.path.abspath(data_dir or default_data_dir()))
    try:
        compute_url = sess.get_endpoint(service_type="compute", interface="public",
                                        region_name=region)
    except Exception as error:  # noqa: BLE001 - refused connection, bad password
        raise click.ClickException(f"cannot reach the cloud: {error}") from None
    root = compute_url.split("/compute")[0]
    sid = _resolve(sess, compute_url, server)
    r = sess.get(f"{root}/pocketstack/v1/servers/{sid}/trace", raise_exc=False)
    if r.status_code != 200:
        raise click.ClickException(f"{r.status_code}: {r.text[:200]}")
    data = r.json()
    if fmt == "json" or as_json:
        click.echo(json.dumps({"server_id": data["server_id"], "requests": requests(data)},
                              indent=2))
        return
    width = width or shutil.get_terminal_size((80, 24)).columns
    for line in render_text(data, width):
        click.echo(line)
