"""``from pocketstack import Cloud`` — several clouds in one process, one after
another and at the same time, each serving its own database, keys and service token."""
from __future__ import annotations

import os
import threading

import pytest

import pocketstack
from pocketstack import Cloud


def _boot(cloud: Cloud, name: str) -> dict:
    """Network, server on it (compute calls the network API with the service token and
    the user's token): ACTIVE proves the cloud's services reach each other."""
    conn = cloud.connection()
    net = conn.network.create_network(name=f"{name}-net")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.9.0.0/24")
    image = conn.image.create_image(name=f"{name}-img", disk_format="raw",
                                    container_format="bare", data=b"\0" * 512)
    flavor = conn.compute.find_flavor("m1.nano")
    server = conn.compute.create_server(name=name, image_id=image.id, flavor_id=flavor.id,
                                        networks=[{"uuid": net.id}])
    server = conn.compute.wait_for_server(server, wait=60, interval=0.2)
    return {"server": server, "network": net}


def test_cloud_is_exported_and_typed():
    assert pocketstack.Cloud is Cloud
    assert "Cloud" in pocketstack.__all__
    assert os.path.exists(os.path.join(os.path.dirname(pocketstack.__file__), "py.typed"))


def test_a_temporary_cloud_serves_and_leaves_nothing_behind():
    with Cloud(hosts=2) as cloud:
        data_dir = cloud.data_dir
        assert cloud.url.startswith("http://127.0.0.1:") and not cloud.url.endswith(":8000")
        assert open(cloud.clouds_yaml).read().count(cloud.auth_url) == 1
        assert cloud.session().get_token()
        hosts = sorted(h.name for h in cloud.connection().compute.hypervisors())
        assert hosts == ["cmp-1", "cmp-2"]
    assert not os.path.exists(data_dir)


def test_clouds_one_after_another_each_boot_a_server():
    # The second cloud used to get 401s between compute and network: a service token
    # of the first cloud was cached at module level.
    for i in range(2):
        with Cloud(hosts=1) as cloud:
            result = _boot(cloud, f"seq{i}")
            assert result["server"].status == "ACTIVE"


def test_two_clouds_at_once_each_serve_their_own_database():
    first, second = Cloud(hosts=1), Cloud(hosts=3)
    with first, second:
        assert first.url != second.url
        a, b = first.connection(), second.connection()
        a.identity.create_project(name="only-in-first")
        b.identity.create_project(name="only-in-second")
        assert a.identity.find_project("only-in-second") is None
        assert b.identity.find_project("only-in-first") is None
        assert len(list(a.compute.hypervisors())) == 1
        assert len(list(b.compute.hypervisors())) == 3
        # A token of one cloud means nothing to the other.
        with pytest.raises(Exception) as error:
            second.session().get(second.url + "/compute/v2.1/servers",
                                 headers={"X-Auth-Token": first.session().get_token()},
                                 authenticated=False, raise_exc=True)
        assert getattr(error.value, "http_status", None) == 401

        results: dict = {}

        def boot(cloud, name):
            results[name] = _boot(cloud, name)

        threads = [threading.Thread(target=boot, args=(c, n))
                   for c, n in ((first, "left"), (second, "right"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert results["left"]["server"].status == "ACTIVE"
        assert results["right"]["server"].status == "ACTIVE"
        assert [s.name for s in a.compute.servers()] == ["left"]
        assert [s.name for s in b.compute.servers()] == ["right"]
        assert results["right"]["server"].hypervisor_hostname in {"cmp-1", "cmp-2", "cmp-3"}
    # Stopping one cloud leaves the other serving (here: both stopped, nothing left).
    assert not os.path.exists(first.data_dir) and not os.path.exists(second.data_dir)


def test_stopping_one_cloud_leaves_the_other_serving():
    keep = Cloud(hosts=1).start()
    try:
        with Cloud(hosts=1) as short:
            short.connection().identity.create_project(name="short-lived")
        conn = keep.connection()
        conn.identity.create_project(name="still-here")
        assert _boot(keep, "after")["server"].status == "ACTIVE"
    finally:
        keep.stop()


def test_a_port_in_use_fails_start_and_leaves_nothing_running(tmp_path):
    with Cloud(hosts=0) as running:
        port = int(running.url.rsplit(":", 1)[1])
        second = Cloud(str(tmp_path / "second"))
        with pytest.raises(Exception, match="Cannot listen"):
            second.start(port=port)
        assert second._lock_file is None
        # The data dir is free again: a start on another port works.
        second.start()
        second.stop()
