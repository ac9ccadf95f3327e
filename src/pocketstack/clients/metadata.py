"""Compute's metadata API as the network agent's metadata proxy calls it (neutron's
metadata agent forwarding to nova-api-metadata).

The API is public: what makes a request trusted is ``X-Instance-ID-Signature``, the
instance id signed with the shared secret (``sign``). No token travels with a guest's
request - its path is the guest's to choose.
"""
from __future__ import annotations

import hashlib
import hmac

from pocketstack.clients import service_users
from pocketstack.clients.base import Client


def sign(instance_id: str) -> str:
    """Hex HMAC-SHA256 of ``instance_id`` keyed with the metadata proxy's shared secret
    (neutron's and nova's X-Instance-ID-Signature)."""
    return hmac.new(service_users.metadata_secret().encode(), instance_id.encode(),
                    hashlib.sha256).hexdigest()


def signature_valid(instance_id: str, signature: str) -> bool:
    return hmac.compare_digest(sign(instance_id).encode(), signature.encode())


class MetadataClient(Client):
    base_path = "/metadata"

    def forward(self, method: str, path: str, params: list, headers: dict, body: bytes):
        """A guest's request, as it is: the response whatever its status (``status_code``,
        ``headers``, ``content``); exceptions.ServiceUnavailable if compute is not reached."""
        return self._send(method, path, headers, None, params, False, 30.0, body or None)

    def _auth_headers(self) -> dict:
        return {}  # a public API (see above)
