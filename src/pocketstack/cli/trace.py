"""`pocketstack trace SERVER`: the boot (or any action) of a server as a waterfall —
relative start, a duration bar, service and host, and the seed-001 step of each row."""
from __future__ import annotations

import os

import click


def _session(cloud_name: str, data_dir: str | None):
    import openstack

    from pocketstack.cloud import default_data_dir

    path = os.path.join(os.path.abspath(data_dir or default_data_dir()), "clouds.yaml")
    if os.path.exists(path) and "OS_CLIENT_CONFIG_FILE" not in os.environ:
        os.environ["OS_CLIENT_CONFIG_FILE"] = path
    return openstack.connect(cloud=cloud_name).session


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


def render(trace: dict, console_width: int = 160):
    """The waterfall as a rich Table, fitted to the terminal: below ~130 columns the seed
    step and service@host move under the step name and the bars get shorter."""
    from rich.table import Table

    events = trace["events"]
    total = max((e["offset_ms"] + e["duration_ms"] for e in events), default=1.0) or 1.0
    compact = console_width < 130
    width = max(8, min(40, console_width - (60 if compact else 112)))
    columns = ("start", "duration", "", "step", "result") if compact else (
        "start", "duration", "", "step", "seed", "service@host", "result")
    table = Table(title=f"server {trace['server_id']}", show_lines=False)
    for col in columns:
        table.add_column(col, no_wrap=col in ("start", "duration", ""))
    for e in events:
        left = min(int(e["offset_ms"] / total * width), width - 1)
        size = max(1, int(e["duration_ms"] / total * width))
        bar = " " * left + "█" * min(size, width - left)
        colour = "green" if e["result"] == "Success" else "red"
        where = f"{e['service']}@{e['host'] or '-'}"
        details = [e["detail"]] if e["detail"] else []
        if compact:
            details.insert(0, f"seed {e['seed_step'] or '-'} · {where}")
        step = e["step"] + "".join(f"\n[dim]{d}[/]" for d in details)
        row = [f"+{e['offset_ms']:.1f}ms", f"{e['duration_ms']:.1f}ms",
               f"[{colour}]{bar.ljust(width)}[/]", step]
        if not compact:
            row += [e["seed_step"] or "", where]
        table.add_row(*row, e["result"] or "")
    return table


@click.command("trace")
@click.argument("server")
@click.option("--os-cloud", "cloud_name", default=os.environ.get("OS_CLOUD", "pocketstack"),
              help="clouds.yaml entry (default pocketstack, from the data dir).")
@click.option("--data-dir", envvar="POCKETSTACK_HOME", default=None)
@click.option("--json", "as_json", is_flag=True, help="Print the raw trace JSON.")
def trace(server, cloud_name, data_dir, as_json):
    """Show the pipeline trace of SERVER (name or id) as a waterfall."""
    import json

    from rich.console import Console

    sess = _session(cloud_name, data_dir)
    compute_url = sess.get_endpoint(service_type="compute", interface="public")
    root = compute_url.split("/compute")[0]
    sid = _resolve(sess, compute_url, server)
    r = sess.get(f"{root}/pocketstack/v1/servers/{sid}/trace", raise_exc=False)
    if r.status_code != 200:
        raise click.ClickException(f"{r.status_code}: {r.text[:200]}")
    data = r.json()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    console = Console()
    console.print(render(data, console.width))
