"""GET /servers/{id}/topology (2.78) through openstacksdk, for a server
without a NUMA topology (nova's answer), and its errors."""
import uuid


def test_topology(cloud, member, api, image_id):
    sid = api.boot(image_id)
    api.wait(sid)
    try:
        import openstack

        # as a user asks for it: the SDK's compute proxy at 2.78 (fetch_topology sends
        # the proxy's default microversion)
        conn = openstack.connection.Connection(session=cloud.user_session(member),
                                               region_name="RegionOne",
                                               compute_api_version="2.78")
        server = conn.compute.get_server(sid)
        assert server.fetch_topology(conn.compute) == {"nodes": [], "pagesize_kb": None}
        r = api.get(f"/servers/{sid}/topology", headers={
            "OpenStack-API-Version": "compute 2.77"})
        assert r.status_code == 404
        assert api.get(f"/servers/{uuid.uuid4()}/topology").status_code == 404
        other = cloud.make_user(roles=("member",))
        r = cloud.user_session(other).get(
            cloud.url + f"/compute/v2.1/servers/{sid}/topology", raise_exc=False,
            headers={"OpenStack-API-Version": "compute 2.78"})
        assert r.status_code == 404
    finally:
        api.delete(f"/servers/{sid}")
        api.wait_gone(sid)
