"""Restart chaos (issue 11): kill -9 the all-in-one cloud in the middle of a burst of boots,
restart it, and measure how long until every server is ACTIVE or ERROR; repeat.

    python bench/restart_chaos.py [--restarts 50] [--burst 20] [--json FILE]

Each round: a fresh token, ``--burst`` POST /servers from 6 clients (with a network, so
ports and DHCP entries are at stake), SIGKILL once half of them were accepted, restart on
the same data dir and port, then poll until every server so far has settled. The build
deadline and the stalled-build check are set to ten minutes, so only the start-up recovery
can settle them [target: within 5 s of the restart]. Between rounds the cloud also serves
list requests from a background client (request load while it starts), and must never
exit by itself. At the end every server is deleted and `pocketstack audit` must report
nothing (no leaked port, claim, usage or DHCP line). Every wait is bounded.

Prints per-round seconds-to-settle and the load average; ``--json FILE`` appends them.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from test_hardening_restart import CONF, _burst  # noqa: E402
from helpers.up_process import EXE, UpProcess, free_port  # noqa: E402


def _background_load(up_ref, stop):
    """GET /servers in a loop against whichever cloud is current (errors while it is
    down are expected; a 500 is not)."""
    import httpx

    fives = 0
    while not stop.is_set():
        up = up_ref[0]
        try:
            r = httpx.get(up.url + "/compute/v2.1/servers", timeout=5,
                          headers={"X-Auth-Token": up_ref[1]})
            fives += r.status_code >= 500 and r.status_code != 503
        except Exception:  # noqa: BLE001 - the cloud is down between kill and restart
            pass
        time.sleep(0.05)
    up_ref.append(fives)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--restarts", type=int, default=50)
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--settle-timeout", type=float, default=60.0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="bench-restart-")
    data_dir = os.path.join(root, "data")
    port = free_port()
    up = UpProcess(data_dir, conf=CONF, port=port).start()
    stop = threading.Event()
    settle_times, exits = [], 0
    try:
        conn = up.sdk()
        image = conn.image.create_image(name="chaos-img", data=b"x" * 64, disk_format="raw",
                                        container_format="bare", visibility="public")
        net = conn.network.create_network(name="chaos-net")
        conn.network.create_subnet(network_id=net.id, cidr="10.99.0.0/16", ip_version=4)
        up_ref = [up, up.session().get_token()]
        loader = threading.Thread(target=_background_load, args=(up_ref, stop), daemon=True)
        loader.start()
        ids: list[str] = []
        for round_no in range(1, args.restarts + 1):
            token = up.session().get_token()
            ids += _burst(up, token, image.id, net.id, args.burst, kill_after=args.burst // 2)
            up = UpProcess(data_dir, conf=CONF, port=port).start()
            conn = up.sdk()
            up_ref[0], up_ref[1] = up, up.session().get_token()
            started = time.monotonic()
            while True:
                states = {s.id: s.status for s in conn.compute.servers()}
                pending = [i for i in ids if states.get(i) not in ("ACTIVE", "ERROR")]
                if not pending:
                    break
                if up.proc.poll() is not None:
                    exits += 1
                    raise SystemExit(f"round {round_no}: the cloud exited:\n{up.output()}")
                if time.monotonic() - started > args.settle_timeout:
                    raise SystemExit(f"round {round_no}: {len(pending)} not settled after "
                                     f"{args.settle_timeout}s")
                time.sleep(0.1)
            settle_times.append(time.monotonic() - started)
            errors = sum(states[i] == "ERROR" for i in ids)
            print(f"round {round_no}: {len(ids)} servers settled in "
                  f"{settle_times[-1]:.2f}s ({errors} ERROR)", flush=True)
        stop.set()
        loader.join(10)
        # Every server listed: a POST the kill cut off may have written one (no 202 seen).
        for server in list(conn.compute.servers()):
            conn.compute.delete_server(server.id)
        deadline = time.monotonic() + 120
        while list(conn.compute.servers()) and time.monotonic() < deadline:
            time.sleep(0.5)
        audit = subprocess.run([EXE, "audit", "--data-dir", data_dir, "--config-file",
                                up.config_file], capture_output=True, text=True, timeout=300)
        load = os.getloadavg()
        result = {
            "bench": "restart_chaos", "restarts": args.restarts, "burst": args.burst,
            "servers": len(ids), "settle_p50_s": round(statistics.median(settle_times), 3),
            "settle_max_s": round(max(settle_times), 3), "exits": exits,
            "unexpected_5xx_under_load": up_ref[2] if len(up_ref) > 2 else None,
            "audit_exit": audit.returncode, "loadavg": [round(x, 2) for x in load],
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        print(json.dumps(result))
        print(audit.stdout)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(result) + "\n")
        return 0 if audit.returncode == 0 and exits == 0 else 1
    finally:
        stop.set()
        up.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
