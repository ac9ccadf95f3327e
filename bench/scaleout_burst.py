"""A burst of servers on the scale-out layout: `pocketstack service api`, conductor,
scheduler and two compute processes over the real RabbitMQ (127.0.0.1:5672, guest/guest)
and PostgreSQL (127.0.0.1:5432, trust), each in its own process and data dir.

    python bench/scaleout_burst.py [--burst 100] [--clients 10] [--access conductor|direct]

``--access conductor``: the computes' config has no database settings (they ask the
conductor, with their own identity user's token where the checkout has one, and report
to placement over REST); ``direct``: they hold the database URL.
Compare code paths with ``PYTHONPATH=<other checkout>/src`` (an older checkout knows
only ``direct``). Prints the time until all ACTIVE and until all deleted, with the load
average. Makes a database and a RabbitMQ vhost of its own and removes them, and stops
every process it started, also after a failure.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import sqlalchemy as sa

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
RABBITMQCTL = shutil.which("rabbitmqctl") or "/usr/sbin/rabbitmqctl"
PASSWORD = "bench-admin-secret"
HOSTS = ("cmp-a", "cmp-b")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--burst", type=int, default=100)
    p.add_argument("--clients", type=int, default=10)
    p.add_argument("--access", choices=("conductor", "direct"), default="conductor")
    p.add_argument("--timeout", type=float, default=300, help="seconds per phase, at most")
    a = p.parse_args()
    suffix = uuid.uuid4().hex[:10]
    db_name, vhost = f"pocketstack_bench_{suffix}", f"pocketstack-bench-{suffix}"
    tmp = tempfile.mkdtemp(prefix="pocketstack-scaleout-bench-")
    admin = sa.create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT",
                             poolclass=sa.pool.NullPool)
    procs: list[subprocess.Popen] = []
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {db_name} TEMPLATE template0")
        subprocess.run([RABBITMQCTL, "add_vhost", vhost], check=True, capture_output=True,
                       timeout=60)
        subprocess.run([RABBITMQCTL, "set_permissions", "-p", vhost, "guest", ".*", ".*",
                        ".*"], check=True, capture_output=True, timeout=60)
        conf = (f"[DEFAULT]\nbind_port = {port}\nhost = controller\n"
                f"transport_url = rabbit://guest:guest@127.0.0.1:5672/{vhost}\n"
                f"[database]\nconnection = postgresql+psycopg://postgres@127.0.0.1:5432/"
                f"{db_name}\n[identity]\npassword_hash_rounds = 4\n[compute]\n"
                "report_interval = 2\n[fake]\nhosts = 0\n")
        api_conf = os.path.join(tmp, "api.conf")
        with open(api_conf, "w") as f:
            f.write(conf)
        data = os.path.join(tmp, "data")

        def spawn(name, role, config_file, data_dir, *extra):
            log = open(os.path.join(tmp, f"{name}.log"), "wb")
            env = {k: v for k, v in os.environ.items() if k != "POCKETSTACK_HOME"}
            procs.append(subprocess.Popen([EXE, "service", role, "--data-dir", data_dir,
                                           "--config-file", config_file, *extra],
                                          stdout=log, stderr=subprocess.STDOUT, env=env))

        spawn("api", "api", api_conf, data, "--admin-password", PASSWORD)
        passwords = os.path.join(data, "service-passwords")
        wait("the service passwords", lambda: os.path.isfile(passwords), 90)
        with open(passwords) as f:
            nova = json.load(f)["nova"]
        sess = session(url)
        compute = url + "/compute/v2.1"
        mv = {"OpenStack-API-Version": "compute 2.79"}
        for name, role in (("conductor", "conductor"), ("scheduler", "scheduler"),
                           *((h, "compute") for h in HOSTS)):
            text = conf + f"[service_user]\nnova_password = {nova}\n"
            if role == "compute" and a.access == "conductor":
                text = text.replace("[compute]\n", "[compute]\ndatabase_access = conductor\n")
                text = re.sub(r"\[database\]\n(?:[^\[\n][^\n]*\n)*", "", text)
                text += host_password_line(sess, url, name)
            node_conf = os.path.join(tmp, f"{name}.conf")
            with open(node_conf, "w") as f:
                f.write(text)
            spawn(name, role, node_conf, os.path.join(tmp, "nodes", name),
                  *(("--host", name) if role == "compute" else ()))

        def all_up():
            try:
                r = sess.get(compute + "/os-services", headers=mv, raise_exc=False)
            except Exception:  # noqa: BLE001 - the API not listening yet
                return False
            up = {(s["binary"], s["host"]) for s in r.json().get("services", [])
                  if s["state"] == "up"} if r.status_code == 200 else set()
            hypervisors = sess.get(compute + "/os-hypervisors/detail", headers=mv,
                                   raise_exc=False).json().get("hypervisors", []) \
                if r.status_code == 200 else []
            return {("nova-compute", h) for h in HOSTS} <= up and len(hypervisors) == 2
        wait("every service up", all_up, 120, procs)
        from pocketstack.common.image_formats import qcow2_header

        image = sess.post(url + "/image/v2/images", json={
            "name": "cirros", "disk_format": "qcow2", "container_format": "bare",
            "visibility": "public"}).json()["id"]
        sess.put(url + f"/image/v2/images/{image}/file", data=qcow2_header(1 << 20),
                 headers={"Content-Type": "application/octet-stream"})
        project = sess.get_project_id()
        r = sess.put(compute + f"/os-quota-sets/{project}", headers=mv, json={
            "quota_set": {"instances": -1, "cores": -1, "ram": -1}})
        assert r.status_code == 200, r.text
        print(f"{os.cpu_count()} CPUs; computes: {a.access}; load {load()}")
        started = time.monotonic()

        def boot(i):
            r = sess.post(compute + "/servers", headers=mv, json={"server": {
                "name": f"burst-{i}", "imageRef": image, "flavorRef": "42",
                "networks": "none"}})
            return r.json()["server"]["id"]

        with concurrent.futures.ThreadPoolExecutor(a.clients) as pool:
            ids = list(pool.map(boot, range(a.burst)))
        posted = time.monotonic() - started

        def statuses():
            r = sess.get(compute + "/servers/detail", headers=mv,
                         params={"limit": 1000}).json()["servers"]
            return [s["status"] for s in r if s["id"] in set(ids)]
        wait("all ACTIVE or ERROR", lambda: (lambda s: len(s) == len(ids) and all(
            x in ("ACTIVE", "ERROR") for x in s))(statuses()), a.timeout, procs)
        active = time.monotonic() - started
        errors = statuses().count("ERROR")
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(a.clients) as pool:
            list(pool.map(lambda sid: sess.delete(compute + f"/servers/{sid}", headers=mv),
                          ids))
        wait("all gone", lambda: not statuses(), a.timeout, procs)
        gone = time.monotonic() - started
        print(f"burst {a.burst} from {a.clients}: all ACTIVE {active:.2f} s (POSTs "
              f"{posted:.2f} s), ERROR {errors}; all deleted {gone:.2f} s; load {load()}")
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")
        admin.dispose()
        subprocess.run([RABBITMQCTL, "delete_vhost", vhost], capture_output=True, timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)


def host_password_line(sess, url: str, host: str) -> str:
    """The host's own identity user (what `pocketstack host-credential` makes), for a
    checkout whose conductor checks the host's name against it; nothing for an older one."""
    import importlib.util

    if importlib.util.find_spec("pocketstack.clients.host_users") is None:
        return ""
    from pocketstack.clients import host_users

    def api_up():
        try:
            return sess.get(url + "/identity/v3", raise_exc=False).status_code == 200
        except Exception:  # noqa: BLE001 - not listening yet
            return False
    wait("the identity API", api_up, 90)
    return f"host_password = {host_users.provision(sess, url + '/identity/v3', host)}\n"


def session(url: str):
    from keystoneauth1 import session as ks
    from keystoneauth1.identity import v3

    return ks.Session(auth=v3.Password(
        auth_url=url + "/identity", username="admin", password=PASSWORD,
        user_domain_id="default", project_name="admin", project_domain_id="default"))


def wait(what: str, check, timeout: float, procs=()) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        dead = [p.args[2] for p in procs if p.poll() is not None]
        if dead:
            raise SystemExit(f"{dead} exited while waiting for {what}")
        time.sleep(0.1)
    raise SystemExit(f"timed out after {timeout:g}s waiting for {what}")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
