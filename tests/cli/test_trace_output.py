"""`pocketstack trace` readable anywhere — at 80 columns and piped (no colour
codes, no line wider than the terminal), steps named by what they do (no
`compute__do_…`), the gaps between steps shown and labelled, and --format json; it needs
no openstacksdk (a plain install has none)."""
import json
import os
import subprocess
import sys

import click
import pytest

from pocketstack.cli import trace as trace_cli

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")


@pytest.fixture(scope="module")
def booted(cloud):
    user = cloud.make_user(roles=("member",))
    conn = cloud.user_sdk(user)
    net = conn.network.create_network(name="trace-net")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.8.0.0/24")
    image = conn.image.create_image(name="trace-img", disk_format="raw",
                                    container_format="bare", data=b"\0" * 512)
    server = conn.compute.create_server(name="traced", image_id=image.id,
                                        flavor_id=conn.compute.find_flavor("m1.nano").id,
                                        networks=[{"uuid": net.id}])
    server = conn.compute.wait_for_server(server, wait=60, interval=0.1)
    conn.compute.stop_server(server)
    conn.compute.wait_for_server(server, status="SHUTOFF", wait=60, interval=0.1)
    return user, server


def _run(cloud, user, *args, env_extra=None):
    env = dict(os.environ, OS_AUTH_URL=cloud.auth_url, OS_USERNAME=user["name"],
               OS_PASSWORD=user["password"], OS_PROJECT_ID=user["project_id"],
               OS_USER_DOMAIN_ID="default")
    env.update(env_extra or {})
    env.pop("COLUMNS", None)
    # `-S`-free python with openstack made unimportable: the command must not need it.
    code = ("import sys; sys.modules['openstack'] = None; "
            "from pocketstack.cli.main import main; sys.argv[0] = 'pocketstack'; main()")
    return subprocess.run([sys.executable, "-c", code, "trace", *args, "--os-cloud",
                           "envvars"], env=env, capture_output=True, text=True, timeout=60)


def test_piped_trace_fits_80_columns_and_names_every_step(cloud, booted):
    user, server = booted
    proc = _run(cloud, user, "traced")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "\x1b[" not in out  # piped: no colour codes
    assert max(len(line) for line in out.splitlines()) <= 80, out
    assert "__" not in out and "compute_" not in out and "seed" not in out.lower()
    for words in ("check the request", "pick a host", "create the ports",
                  "define and start the guest", "build and run the server on the host"):
        assert words in out, out
    assert "create req-" in out and "stop req-" in out  # one waterfall per request
    assert "(gap) hand-off" in out  # e.g. api → conductor: the RPC hand-off


def test_width_option_and_json_format(cloud, booted):
    user, server = booted
    wide = _run(cloud, user, server.id, "--width", "120")
    assert wide.returncode == 0, wide.stderr
    assert max(len(line) for line in wide.stdout.splitlines()) <= 120
    proc = _run(cloud, user, "traced", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["server_id"] == server.id
    create = data["requests"][0]
    assert create["action"] == "create" and create["total_ms"] > 0
    kinds = {row["kind"] for row in create["steps"]}
    assert kinds == {"step", "gap"}
    spawn = [r for r in create["steps"] if r.get("step") == "compute_spawn"]
    assert spawn and spawn[0]["label"] == "define and start the guest"
    assert spawn[0]["result"] == "Success" and spawn[0]["host"].startswith("cmp-")
    starts = [r["start_ms"] for r in create["steps"]]
    assert starts == sorted(starts) and starts[0] == 0


def test_unknown_server_and_unreachable_cloud_are_one_line_errors(cloud, booted):
    user, _ = booted
    proc = _run(cloud, user, "no-such-server")
    assert proc.returncode == 1 and "No unique server named 'no-such-server'" in proc.stderr
    proc = _run(cloud, user, "traced", env_extra={"OS_AUTH_URL": "http://127.0.0.1:9/identity"})
    assert proc.returncode == 1 and "cannot reach the cloud" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_gaps_are_labelled_by_what_lies_between():
    events = [
        {"step": "api_create", "service": "api", "host": None, "offset_ms": 10.0,
         "duration_ms": 2.0, "result": "Success", "detail": "", "request_id": "r"},
        {"step": "conductor_cast_build", "service": "conductor", "host": "h",
         "offset_ms": 15.0, "duration_ms": 1.0, "result": "Success", "detail": "",
         "request_id": "r"},
        {"step": "compute_custom__thing", "service": "conductor", "host": "h",
         "offset_ms": 16.2, "duration_ms": 1.0, "result": "Error", "detail": "x" * 300,
         "request_id": "r"},
    ]
    rows = trace_cli.steps_with_gaps(events)
    assert [r["kind"] for r in rows] == ["step", "gap", "step", "step"]
    assert rows[1]["label"].startswith("hand-off api → conductor")
    assert rows[1]["start_ms"] == 2.0 and rows[1]["duration_ms"] == 3.0
    assert rows[3]["label"] == "compute custom thing"
    lines = trace_cli.render_text({"server_id": "s", "events": events, "actions": []}, 60)
    assert max(len(click.unstyle(line)) for line in lines) <= 60
