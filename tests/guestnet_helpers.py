"""Helpers of the metadata and guest networking tests: a project with a network, a key
pair and an image, and servers booted in it through the real compute API (openstacksdk)."""
from __future__ import annotations

import base64
import time
import uuid



def _public_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH,
                            serialization.PublicFormat.OpenSSH).decode() + " guestnet@test"


PUBLIC_KEY = _public_key()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class Project:
    """A member project with what booting a server needs."""

    def __init__(self, cloud):
        self.cloud = cloud
        self.user = cloud.make_user(roles=("member",))
        self.conn = cloud.user_sdk(self.user)
        self.admin = cloud.sdk()
        self.key = self.conn.compute.create_keypair(name=unique("key"), public_key=PUBLIC_KEY)
        image = self.admin.image.create_image(
            name=unique("tiny"), disk_format="raw", container_format="bare",
            visibility="public", data=b"\0" * 1024)
        self.image_id = image.id

    def network(self, cidr: str = "10.20.0.0/24", **subnet):
        net = self.conn.network.create_network(name=unique("net"))
        sub = self.conn.network.create_subnet(network_id=net.id, ip_version=4, cidr=cidr,
                                              name=unique("sub"), **subnet)
        return net, sub

    def boot(self, network_id: str, user_data: bytes | None = b"#!/bin/sh\necho hi\n",
             fixed_ip: str | None = None, **extra):
        network = {"uuid": network_id, **({"fixed_ip": fixed_ip} if fixed_ip else {})}
        kwargs = dict(name=unique("vm"), image_id=self.image_id, flavor_id="42",
                      networks=[network], key_name=self.key.name, **extra)
        if user_data is not None:
            kwargs["user_data"] = base64.b64encode(user_data).decode()
        server = self.conn.compute.create_server(**kwargs)
        return self.conn.compute.wait_for_server(server, interval=0.05, wait=60)

    def port_of(self, server_id: str):
        ports = list(self.admin.network.ports(device_id=server_id))
        assert len(ports) == 1, ports
        return ports[0]

    def cleanup(self):
        for server in self.conn.compute.servers():
            self.conn.compute.delete_server(server)
        deadline = time.monotonic() + 30
        while list(self.conn.compute.servers()) and time.monotonic() < deadline:
            time.sleep(0.05)
        for net in self.conn.network.networks(project_id=self.user["project_id"]):
            for port in self.admin.network.ports(network_id=net.id,
                                                 device_owner="compute:nova"):
                self.admin.network.delete_port(port)
            self.conn.network.delete_network(net)
        self.admin.image.delete_image(self.image_id, ignore_missing=True)
