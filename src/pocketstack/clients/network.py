"""Neutron v2.0 through its REST API (seed steps 22-24): nova's allocate_for_instance
and deallocate_for_instance, reduced to what a boot needs."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.clients.base import Client


class NetworkClient(Client):
    base_path = "/network/v2.0"

    def get_network(self, network_id: str) -> dict | None:
        return self.find(f"/networks/{network_id}", "network")

    def list_networks(self, **params) -> list[dict]:
        return self.request("GET", "/networks", params=params).json()["networks"]

    def get_port(self, port_id: str) -> dict | None:
        return self.find(f"/ports/{port_id}", "port")

    def list_ports(self, **params) -> list[dict]:
        return self.request("GET", "/ports", params=params).json()["ports"]

    def create_port(self, body: dict) -> dict:
        return self.request("POST", "/ports", json={"port": body}, ok=(201,)).json()["port"]

    def update_port(self, port_id: str, body: dict) -> dict:
        return self.request("PUT", f"/ports/{port_id}", json={"port": body}).json()["port"]

    def delete_port(self, port_id: str) -> bool:
        try:
            self.request("DELETE", f"/ports/{port_id}", ok=(204,))
            return True
        except exceptions.NotFound:
            return False

    def list_floatingips(self, **params) -> list[dict]:
        return self.request("GET", "/floatingips", params=params).json()["floatingips"]

    def list_security_groups(self, **params) -> list[dict]:
        return self.request("GET", "/security-groups", params=params).json()["security_groups"]

    def get_subnet(self, subnet_id: str) -> dict | None:
        return self.find(f"/subnets/{subnet_id}", "subnet")

    def list_subnets(self, **params) -> list[dict]:
        """A list value (``id=[a, b]``) is sent as the parameter repeated, as neutron
        reads it."""
        return self.request("GET", "/subnets", params=params).json()["subnets"]

    # --- what nova's proxy APIs below 2.36 ask (os-security-groups, os-floating-ips,
    # os-floating-ip-pools, os-networks): the answer as neutron gave it, so the caller
    # can turn neutron's errors into nova's ---------------------------------------------

    def get_security_group(self, group_id: str) -> dict | None:
        return self.find(f"/security-groups/{group_id}", "security_group")

    def create_security_group(self, body: dict):
        return self.request("POST", "/security-groups", json={"security_group": body},
                            ok=(201, 400, 409))

    def update_security_group(self, group_id: str, body: dict):
        return self.request("PUT", f"/security-groups/{group_id}",
                            json={"security_group": body}, ok=(200, 400, 404, 409))

    def delete_security_group(self, group_id: str):
        return self.request("DELETE", f"/security-groups/{group_id}", ok=(204, 404, 409))

    def get_security_group_rule(self, rule_id: str) -> dict | None:
        return self.find(f"/security-group-rules/{rule_id}", "security_group_rule")

    def create_security_group_rule(self, body: dict):
        return self.request("POST", "/security-group-rules",
                            json={"security_group_rule": body}, ok=(201, 400, 404, 409))

    def delete_security_group_rule(self, rule_id: str):
        return self.request("DELETE", f"/security-group-rules/{rule_id}", ok=(204, 404, 409))

    def get_floatingip(self, fip_id: str) -> dict | None:
        return self.find(f"/floatingips/{fip_id}", "floatingip")

    def create_floatingip(self, body: dict):
        return self.request("POST", "/floatingips", json={"floatingip": body},
                            ok=(201, 400, 404, 409))

    def delete_floatingip(self, fip_id: str):
        return self.request("DELETE", f"/floatingips/{fip_id}", ok=(204, 404, 409))
