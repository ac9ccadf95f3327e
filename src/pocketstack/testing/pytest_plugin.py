"""pytest plugin: an OpenStack cloud for your tests, in-process.

Installed with pocketstack (entry point ``pytest11`` named ``pocketstack``); with plugin
auto-loading off, load it with ``pytest -p pocketstack``.

Fixtures:

* ``openstack_cloud`` (session): a running ``pocketstack.Cloud`` — ``.url``,
  ``.auth_url``, ``.clouds_yaml``, ``.session()``, ``.connection()`` (admin).
* ``openstack_project``: a fresh project with a member user and a ``private`` network
  (10.0.0.0/24) for each test; it and everything it came to own are deleted after the
  test (``pocketstack.testing.Project``).
* ``openstack_conn``: an openstacksdk Connection as that project's member user.

Options (command line or ini file): ``--pocketstack-hosts N`` / ``pocketstack_hosts``,
the simulated compute hosts of the session's cloud (default 4).

Markers:

* ``@pytest.mark.pocketstack(hosts=N, overrides={...})``: the test's project lives in a
  cloud of its own with these settings (started for it and stopped after it).
* ``@pytest.mark.pocketstack_fault(operation="spawn", action="fail", host=None, times=1,
  ...)``: a fault injected into the simulated hosts for the test (see the README's fault
  injection section); removed after it. Repeat the marker for several.
* ``@pytest.mark.pocketstack_libvirt``: the test needs real VMs: its project lives in a
  cloud of its own with a libvirt host next to the simulated ones ([libvirt] enabled);
  skipped unless libvirt-python, the driver and a running libvirtd are there.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterator

import pytest

if TYPE_CHECKING:
    import openstack.connection

    from pocketstack.cloud import Cloud
    from pocketstack.testing.projects import Project


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pocketstack", "pocketstack: an in-process OpenStack cloud")
    group.addoption("--pocketstack-hosts", type=int, default=None, metavar="N",
                    help="Simulated compute hosts of the session's cloud (default 4).")
    parser.addini("pocketstack_hosts", "Simulated compute hosts of the session's cloud.",
                  default="4")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "pocketstack(hosts=N, overrides={}): the test's project lives in a "
                   "cloud of its own with these settings")
    config.addinivalue_line(
        "markers", "pocketstack_fault(operation, action, host=None, times=1, "
                   "hang_seconds=0, message=''): inject a fault for the test")
    config.addinivalue_line(
        "markers", "pocketstack_libvirt: needs real VMs (skipped without libvirt)")
    _do_not_rewrite_pocketstack(config)


def _do_not_rewrite_pocketstack(config: pytest.Config) -> None:
    """pytest marks every package of a distribution that ships a plugin for assertion
    rewriting, so each pocketstack module the cloud imports lazily, on its own threads,
    would go through pytest's ast.parse — which CPython 3.11 does not make safe across
    threads ("AST constructor recursion depth mismatch"). pocketstack has no test
    asserts to rewrite: unmark it (pytest has no public switch for this)."""
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and "pocketstack" in marked:
        marked.discard("pocketstack")
        getattr(hook, "_marked_for_rewrite_cache", {}).clear()


def _session_hosts(config: pytest.Config) -> int:
    option = config.getoption("--pocketstack-hosts")
    return int(option if option is not None else config.getini("pocketstack_hosts"))


@pytest.fixture(scope="session")
def openstack_cloud(request: pytest.FixtureRequest) -> Iterator["Cloud"]:
    from pocketstack.cloud import Cloud

    cloud = Cloud(hosts=_session_hosts(request.config)).start()
    try:
        yield cloud
    finally:
        cloud.stop()


def _libvirt_missing() -> str | None:
    try:
        import libvirt  # noqa: F401
    except ImportError:
        return "libvirt-python is not installed (pip install 'pocketstack[libvirt]')"
    from pocketstack.common import config

    if config.optional_module("compute", "virt.libvirt") is None:
        return "this pocketstack has no libvirt compute driver"
    if not os.path.exists("/var/run/libvirt/libvirt-sock"):
        return "libvirtd is not running"
    return None


@pytest.fixture
def _pocketstack_test_cloud(request: pytest.FixtureRequest) -> Iterator["Cloud"]:
    """The session's cloud, or one of the test's own under @pytest.mark.pocketstack."""
    libvirt = request.node.get_closest_marker("pocketstack_libvirt") is not None
    if libvirt:
        reason = _libvirt_missing()
        if reason:
            pytest.skip(reason)
    marker = request.node.get_closest_marker("pocketstack")
    if marker is None and not libvirt:
        yield request.getfixturevalue("openstack_cloud")
        return
    from pocketstack.cloud import Cloud

    kwargs = dict(marker.kwargs) if marker is not None else {}
    unknown = set(kwargs) - {"hosts", "overrides"} or (marker.args if marker else ())
    if unknown:
        raise pytest.UsageError(f"@pytest.mark.pocketstack takes hosts= and overrides= "
                                f"only, not {unknown}")
    overrides = dict(kwargs.get("overrides") or {})
    if libvirt:  # a real libvirt host next to the simulated ones
        overrides.setdefault("libvirt.enabled", True)
    cloud = Cloud(hosts=kwargs.get("hosts", _session_hosts(request.config)),
                  overrides=overrides).start()
    try:
        yield cloud
    finally:
        cloud.stop()


@pytest.fixture
def openstack_project(request: pytest.FixtureRequest,
                      _pocketstack_test_cloud: "Cloud") -> Iterator["Project"]:
    from pocketstack.testing.projects import Project, admin_session

    cloud = _pocketstack_test_cloud
    project = Project.create(cloud)
    faults = []
    try:
        for marker in reversed(list(request.node.iter_markers("pocketstack_fault"))):
            body = dict(marker.kwargs)
            resp = admin_session(cloud).post(cloud.url + "/pocketstack/v1/faults",
                                             json={"fault": body}, raise_exc=False)
            if resp.status_code != 201:
                raise pytest.UsageError(f"@pytest.mark.pocketstack_fault({body}): "
                                        f"{resp.text}")
            faults.append(resp.json()["fault"]["id"])
        yield project
    finally:
        for fault_id in faults:
            admin_session(cloud).delete(f"{cloud.url}/pocketstack/v1/faults/{fault_id}",
                                        raise_exc=False)
        project.delete()


@pytest.fixture
def openstack_conn(openstack_project: "Project") -> "openstack.connection.Connection":
    return openstack_project.connection()
