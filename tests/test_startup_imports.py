"""Issue 13: a start imports only what a start needs. What a restart does not use (HTTP
clients, jsonschema, alembic on an up-to-date database, websockets, the other CLI commands)
is imported by its first use; these tests look at ``sys.modules`` in a fresh interpreter,
so a module-level import that brings one back fails them (behaviour, not timing)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# Imported on first use only: never by a warm start of a cloud that then serves every
# service (ready), nor by the CLI before it runs a command.
LAZY_IN_A_RUNNING_CLOUD = [
    "alembic",        # migrations run only when the database is behind the code
    "httpx",          # the network service's notifier, on its first event
    "requests",       # compute's clients to image/network, on the first build
    "keystoneauth1",  # the same
    "jsonschema",     # the first request body validated
    "websockets",     # no websocket routes
    "jinja2",         # the dashboard, on its first page
    "pycdlib",        # config drives, in the libvirt driver
]

_START_AND_LIST = textwrap.dedent("""
    import json, sys
    from pocketstack import Cloud

    cloud = Cloud(sys.argv[1], admin_password="pw", hosts=1,
                  overrides={"identity.password_hash_rounds": 4})
    cloud.start()
    try:
        assert cloud.ready.is_set()
        print(json.dumps(sorted(sys.modules)))
    finally:
        cloud.stop()
""")


def _modules_after(code: str, *args: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {name.split(".")[0] for name in json.loads(proc.stdout.strip().splitlines()[-1])}


def test_a_warm_start_imports_none_of_the_lazy_modules(tmp_path):
    data_dir = str(tmp_path / "data")
    _modules_after(_START_AND_LIST, data_dir)  # first start: keys, database, bootstrap
    loaded = _modules_after(_START_AND_LIST, data_dir)
    assert "sqlalchemy" in loaded and "uvicorn" in loaded  # it did start
    assert [name for name in LAZY_IN_A_RUNNING_CLOUD if name in loaded] == []


def test_the_cli_imports_no_cloud_module_before_a_command_needs_it():
    loaded = _modules_after(
        "import json, sys\nimport pocketstack.cli.main\nprint(json.dumps(sorted(sys.modules)))")
    heavy = ["sqlalchemy", "oslo_config", "oslo_policy", "uvicorn", "starlette", "httpx",
             "requests", "openstack", "keystoneauth1"]
    assert [name for name in heavy if name in loaded] == []


def test_import_pocketstack_is_light():
    loaded = _modules_after(
        "import json, sys\nimport pocketstack\nprint(json.dumps(sorted(sys.modules)))")
    assert [name for name in ("sqlalchemy", "oslo_config", "click", "uvicorn")
            if name in loaded] == []
