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

from pocketstack.common.trace_steps import (  # noqa: F401 - used by callers
    GAP_MS, STEP_LABELS, label, requests, steps_with_gaps)


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
