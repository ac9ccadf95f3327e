"""The pytest plugin, exercised the way a user's project runs it — a pytest of
its own, loading the plugin with ``-p pocketstack`` (auto-loading off), on the documented
example suite examples/test_with_pocketstack.py, copied into a project directory of its own
(so the repository's conftest is not used)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "test_with_pocketstack.py")


@pytest.fixture(scope="module")
def example_project(tmp_path_factory):
    project = tmp_path_factory.mktemp("example-project")
    (project / "pytest.ini").write_text(
        "[pytest]\naddopts = -p no:cacheprovider\n"
        "filterwarnings = ignore::DeprecationWarning\n")
    shutil.copy(EXAMPLE, project / "test_with_pocketstack.py")
    return project


def _run(project, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "pocketstack", "-q", *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)


def test_the_example_suite_passes_with_the_plugin(example_project):
    proc = _run(example_project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 passed" in proc.stdout


def test_the_example_runs_from_the_checkout_as_its_instructions_say():
    """`pytest examples/test_with_pocketstack.py` in the checkout, where pytest-timeout
    need not be installed (`-p no:timeout` as if it were not): pyproject.toml's
    --timeout=300 must not apply."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:timeout", "-p",
                           "no:cacheprovider", "-q", "examples/test_with_pocketstack.py"],
                          cwd=os.path.join(HERE, "..", ".."), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 passed" in proc.stdout


def test_the_plugin_registers_its_options_and_markers(example_project):
    proc = _run(example_project, "--help")
    assert "--pocketstack-hosts" in proc.stdout
    proc = _run(example_project, "--markers")
    assert "pocketstack_fault(" in proc.stdout and "pocketstack(hosts=N" in proc.stdout


def test_a_bad_fault_marker_is_a_clear_error(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_bad.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.pocketstack_fault(operation='teleport', action='fail')\n"
        "def test_x(openstack_project):\n    pass\n")
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "pocketstack", "-q",
                           "--pocketstack-hosts", "1"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "Unknown operation 'teleport'" in proc.stdout


def test_the_project_fixture_cleans_up_what_the_test_left(cloud):
    from pocketstack.testing import Project

    project = Project.create(cloud.cloud)
    conn = project.connection()
    image = conn.image.create_image(name="left", disk_format="raw", container_format="bare",
                                    data=b"\0" * 64)
    conn.compute.create_keypair(name="left-key")
    router = conn.network.create_router(name="left-router")
    conn.network.add_interface_to_router(router, subnet_id=project.subnet_id)
    conn.network.create_security_group(name="left-sg")
    server = conn.compute.create_server(
        name="left", image_id=image.id, flavor_id=conn.compute.find_flavor("m1.nano").id,
        networks=[{"uuid": project.network_id}])
    conn.compute.wait_for_server(server, wait=60, interval=0.2)
    project.delete()

    admin = cloud.sdk()
    assert admin.identity.find_project(project.id) is None
    assert admin.identity.find_user(project.user_id) is None
    assert list(admin.compute.servers(all_projects=True, project_id=project.id)) == []
    assert list(admin.network.ports(project_id=project.id)) == []
    assert list(admin.network.networks(project_id=project.id)) == []
    assert list(admin.network.routers(project_id=project.id)) == []
    assert list(admin.network.security_groups(project_id=project.id)) == []
    assert admin.image.find_image(image.id) is None


def test_the_project_fixture_in_process_looks_as_made_through_the_apis(cloud):
    """In-process, the project is made and (the test leaving only its network) deleted
    through the internal API: what a user and an admin see must be what the REST calls
    made - a member on the project, the network with its subnet and DHCP port, the
    default security group - and nothing of it must be left after."""
    from pocketstack.testing import Project

    project = Project.create(cloud.cloud)
    admin = cloud.sdk()
    assert admin.identity.get_project(project.id).name == project.name
    roles = {a.role["id"] for a in admin.identity.role_assignments(
        user_id=project.user_id, project_id=project.id)}
    assert roles == {admin.identity.find_role("member").id}
    conn = project.connection()  # the member user logs in with the fixture's password
    network = conn.network.get_network(project.network_id)
    assert (network.name, network.project_id) == ("private", project.id)
    subnet = conn.network.get_subnet(project.subnet_id)
    assert (subnet.cidr, subnet.network_id) == ("10.0.0.0/24", project.network_id)
    groups = [g.name for g in conn.network.security_groups(project_id=project.id)]
    assert groups == ["default"]

    project.delete()
    assert admin.identity.find_project(project.id) is None
    assert admin.identity.find_user(project.user_id) is None
    assert admin.network.find_network(project.network_id) is None
    assert list(admin.network.ports(project_id=project.id)) == []
    assert list(admin.network.security_groups(project_id=project.id)) == []
    project.delete()  # a second delete (the test deleted it all itself) is harmless
