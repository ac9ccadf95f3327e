"""How a project that targets OpenStack tests against pocketstack with the pytest plugin.

In the checkout (`make up` made .venv with pocketstack and openstacksdk):

    .venv/bin/pip install pytest
    .venv/bin/pytest examples/test_with_pocketstack.py

In a project of your own: `pip install <pocketstack checkout> openstacksdk pytest`, then
`pytest`. (examples/pytest.ini keeps pocketstack's own pytest settings out of the way.)

One cloud starts for the session (under a second); every test gets a fresh project with a
member user and a `private` network, deleted after the test with all it came to own.

The fixtures:

* ``openstack_cloud``: the session's ``pocketstack.Cloud`` - ``.url``, ``.auth_url``,
  ``.clouds_yaml`` (the path of a clouds.yaml naming it ``pocketstack``), ``.data_dir``,
  ``.admin_password``, ``.session()`` (keystoneauth1) and ``.connection()``
  (openstacksdk), both as admin.
* ``openstack_project``: the test's project (``pocketstack.testing.Project``) - ``.id``,
  ``.name``; its member user ``.user_id``, ``.username``, ``.password``; its network
  ``.network_id`` (named ``private``) and subnet ``.subnet_id`` (``private-subnet``,
  10.0.0.0/24); ``.cloud``, the Cloud it lives in (the session's, or the test's own
  under ``@pytest.mark.pocketstack``); ``.session()`` and ``.connection()`` as the user.
* ``openstack_conn``: ``openstack_project.connection()``.
"""
import pytest


def test_boot_a_server(openstack_conn, openstack_project):
    image = openstack_conn.image.create_image(
        name="tiny", disk_format="raw", container_format="bare", data=b"\0" * 1024)
    flavor = openstack_conn.compute.find_flavor("m1.nano")
    server = openstack_conn.compute.create_server(
        name="vm1", image_id=image.id, flavor_id=flavor.id,
        networks=[{"uuid": openstack_project.network_id}])
    server = openstack_conn.compute.wait_for_server(server, wait=60, interval=0.2)
    assert server.status == "ACTIVE"
    assert server.addresses["private"][0]["addr"].startswith("10.0.0.")


def test_each_test_starts_clean(openstack_conn):
    # The server of the test above was deleted with its project.
    assert list(openstack_conn.compute.servers()) == []
    assert [n.name for n in openstack_conn.network.networks()] == ["private"]


@pytest.mark.pocketstack_fault(operation="spawn", action="fail", times=None)
def test_my_tool_copes_with_a_failed_boot(openstack_conn, openstack_project):
    flavor = openstack_conn.compute.find_flavor("m1.nano")
    image = openstack_conn.image.create_image(
        name="tiny", disk_format="raw", container_format="bare", data=b"\0" * 1024)
    server = openstack_conn.compute.create_server(
        name="doomed", image_id=image.id, flavor_id=flavor.id,
        networks=[{"uuid": openstack_project.network_id}])
    server = openstack_conn.compute.wait_for_server(server, status="ERROR", failures=[],
                                                    wait=60, interval=0.2)
    assert server.status == "ERROR"


@pytest.mark.pocketstack(hosts=1)
def test_a_cloud_of_its_own(openstack_project):
    admin = openstack_project.cloud.connection()
    assert [h.name for h in admin.compute.hypervisors()] == ["cmp-1"]


def test_the_cli_and_other_tools_use_clouds_yaml(openstack_cloud):
    # Terraform, Ansible and the openstack CLI read this file (cloud name "pocketstack").
    assert "auth_url: " + openstack_cloud.auth_url in open(openstack_cloud.clouds_yaml).read()
