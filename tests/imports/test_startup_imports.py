"""A start imports only what a start needs. What a restart does not use (HTTP
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
    "cachetools",     # not used: common/cache.py is an ordered dict
]
# Imported by oslo.config/oslo.policy at their top: a stand-in until first used
# (common/deferred.py).
DEFERRED = ["stevedore", "netaddr", "rfc3986", "oslo_utils.strutils", "xmlrpc.client", "yaml"]

_START_AND_LIST = textwrap.dedent("""
    import json, sys
    from pocketstack import Cloud

    cloud = Cloud(sys.argv[1], admin_password="pw", hosts=1,
                  overrides={"identity.password_hash_rounds": 4})
    cloud.start()
    try:
        assert cloud.ready.is_set()
        still_deferred = [name for name, module in list(sys.modules.items())
                          if type(module).__name__ == "_Deferred"]
        print(json.dumps(sorted(still_deferred)))
        print(json.dumps(sorted(sys.modules)))
    finally:
        cloud.stop()
""")


def _output(code: str, *args: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()


def _modules_after(code: str, *args: str) -> set[str]:
    return {name.split(".")[0] for name in json.loads(_output(code, *args)[-1])}


def test_a_warm_start_imports_none_of_the_lazy_modules(tmp_path):
    data_dir = str(tmp_path / "data")
    _output(_START_AND_LIST, data_dir)  # first start: keys, database, bootstrap
    *_, deferred, modules = _output(_START_AND_LIST, data_dir)
    loaded = {name.split(".")[0] for name in json.loads(modules)}
    assert "sqlalchemy" in loaded and "uvicorn" in loaded  # it did start
    assert [name for name in LAZY_IN_A_RUNNING_CLOUD if name in loaded] == []
    assert json.loads(deferred) == sorted(DEFERRED)


def test_a_deferred_module_works_when_used():
    out = _output(textwrap.dedent("""
        import sys
        import pocketstack.common.config
        import oslo_config.types
        from oslo_policy import policy
        assert type(sys.modules["netaddr"]).__name__ == "_Deferred"
        print(oslo_config.types.IPAddress()("10.0.0.1"), oslo_config.types.URI()("http://h/p"))
        print(policy.strutils.mask_password("password=secret"))
        import netaddr.core  # a submodule of a deferred package
        print(type(sys.modules["netaddr"]).__name__, netaddr.IPNetwork("10.0.0.0/24").size)
    """))
    assert out == ["10.0.0.1 http://h/p", "password=***", "module 256"]


def test_jsonutils_sees_xmlrpc_datetime_through_the_stand_in():
    out = _output(textwrap.dedent("""
        import sys
        from pocketstack.common import policy
        policy._oslo_policy()  # oslo.policy, hence oslo.serialization's jsonutils
        print(type(sys.modules["xmlrpc.client"]).__name__)
        from oslo_serialization import jsonutils
        from xmlrpc.client import DateTime
        print(jsonutils.to_primitive({"at": DateTime("20240102T03:04:05")}))
    """))
    assert out == ["_Deferred", "{'at': '2024-01-02T03:04:05.000000'}"]


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
