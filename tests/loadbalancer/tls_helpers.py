"""Certificates for the TERMINATED_HTTPS tests: a CA and server certificates it signs
(made with ``cryptography``), stored in the key manager as Octavia's users store them —
a certificate container of PEM secrets, or one secret holding a PKCS12 bundle."""
from __future__ import annotations

import base64
import datetime as dt

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


class CA:
    def __init__(self, cn: str = "pocketstack test CA"):
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        self.cert = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn))
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - dt.timedelta(days=1))
                     .not_valid_after(now + dt.timedelta(days=30))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
                     .sign(self.key, hashes.SHA256()))

    def pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def issue(self, host: str):
        """(certificate PEM, key PEM, certificate, key) for ``host``."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        cert = (x509.CertificateBuilder().subject_name(_name(host))
                .issuer_name(self.cert.subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(days=1))
                .not_valid_after(now + dt.timedelta(days=30))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), False)
                .sign(self.key, hashes.SHA256()))
        return (cert.public_bytes(serialization.Encoding.PEM),
                key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.TraditionalOpenSSL,
                                  serialization.NoEncryption()), cert, key)


class Barbican:
    """The key manager through a user's keystoneauth session."""

    def __init__(self, session):
        self.s = session

    def req(self, method: str, path: str, json=None):
        return self.s.request(path, method, json=json, raise_exc=False,
                              endpoint_filter={"service_type": "key-manager"})

    def secret(self, payload: bytes, content_type: str = "text/plain") -> str:
        if content_type == "text/plain":
            body = {"payload": payload.decode(), "payload_content_type": "text/plain"}
        else:
            body = {"payload": base64.b64encode(payload).decode(),
                    "payload_content_type": content_type,
                    "payload_content_encoding": "base64"}
        r = self.req("POST", "/v1/secrets", body)
        assert r.status_code == 201, r.text
        return r.json()["secret_ref"]

    def container(self, cert_pem: bytes, key_pem: bytes) -> str:
        refs = [{"name": "certificate", "secret_ref": self.secret(cert_pem)},
                {"name": "private_key", "secret_ref": self.secret(key_pem)}]
        r = self.req("POST", "/v1/containers", {"type": "certificate", "name": "tls",
                                                 "secret_refs": refs})
        assert r.status_code == 201, r.text
        return r.json()["container_ref"]

    def pkcs12(self, cert, key) -> str:
        bundle = pkcs12.serialize_key_and_certificates(b"tls", key, cert, None,
                                                       serialization.NoEncryption())
        return self.secret(bundle, "application/octet-stream")
