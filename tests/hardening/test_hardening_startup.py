"""A request that arrives while the cloud starts never meets a model half
imported, and a service that is not ready yet answers 503 with Retry-After."""
import os
import subprocess
import sys
import textwrap
import threading

from starlette.testclient import TestClient  # noqa: E402


def test_prepare_imports_every_model_and_configures_mappers(tmp_path):
    """Before serving, every service's models are imported and the shared registry is
    configured: no later import can leave a request's mapper configuration half-way
    (the start-up crash was a query on one thread while network/models.py was being
    imported on another). A fresh interpreter, so no other test imported them first."""
    script = textwrap.dedent(f"""
        import sys
        from pocketstack.cloud import Cloud
        from pocketstack.common import config, db
        cloud = Cloud({str(tmp_path)!r}, admin_password="pw")
        cloud.prepare()
        try:
            missing = [n for n in config.SERVICE_PACKAGES
                       if config.optional_module(n, "models") is not None
                       and f"pocketstack.{{n}}.models" not in sys.modules]
            assert not missing, missing
            assert "pocketstack.network.models" in sys.modules
            assert not db.Base.registry._new_mappers, "mappers left to configure"
            # Every mapper is usable from another thread at once.
            errors = []
            def query():
                try:
                    from pocketstack.network.models import Port
                    with db.reader() as s:
                        s.query(Port).count()
                except Exception as e:
                    errors.append(e)
            t = __import__("threading").Thread(target=query); t.start(); t.join()
            assert not errors, errors
        finally:
            cloud.close()
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, POCKETSTACK_HOME=str(tmp_path)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("ok")


def _app_not_ready():
    from pocketstack.wsgi.app import PocketstackApp

    app = PocketstackApp(threading.Event())  # never set: the cloud is still starting
    app.READY_TIMEOUT = 0.05
    return app


def test_service_not_ready_is_503_with_retry_after_in_its_own_format(cloud):
    client = TestClient(_app_not_ready())
    r = client.get("/compute/v2.1/flavors")
    assert r.status_code == 503
    assert int(r.headers["retry-after"]) > 0
    assert r.headers["x-openstack-request-id"].startswith("req-")
    assert r.json()["serviceUnavailable"]["code"] == 503
    r = client.get("/network/v2.0/networks")
    assert r.status_code == 503 and "NeutronError" in r.json()
    assert "retry-after" in r.headers


def test_identity_answers_while_the_rest_is_starting(cloud):
    client = TestClient(_app_not_ready())
    r = client.get("/identity/v3")
    assert r.status_code == 200
    assert "version" in r.json()


def test_reads_are_served_while_the_background_workers_start(cloud):
    """Once the REST packages are loaded, GETs need no background worker and
    are answered; a write waits for the workers (its service's RPC roles, start-up
    recovery) and, if they are not running in time, gets the 503."""
    from pocketstack.wsgi.app import PocketstackApp

    app = PocketstackApp(threading.Event(), reads_ready=threading.Event())
    app.READY_TIMEOUT = 0.05
    app.reads_ready.set()  # the REST packages are loaded; the workers never start
    client = TestClient(app)
    r = client.get("/compute/v2.1/")
    assert r.status_code == 200 and r.json()["version"]["id"] == "v2.1"
    r = client.get("/network/v2.0/networks")
    assert r.status_code == 401  # reached the network API, which wants a token
    r = client.post("/compute/v2.1/servers", json={"server": {"name": "early"}})
    assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
    assert r.json()["serviceUnavailable"]["code"] == 503
