"""TLS certificates of TERMINATED_HTTPS listeners, read from the key manager as Octavia's
barbican cert manager does: a ref names a certificate container (certificate, private_key,
intermediates, private_key_passphrase) or a secret holding a PKCS12 bundle.

At create or update the API reads each ref acting for the user (a ref the user cannot
read, a certificate that does not parse, a key that does not match it: Octavia's 400
"Could not retrieve certificate") and adds the octavia service user to its read ACLs
(Octavia's barbican_acl auth), so the data plane can read it later with no user behind.
"""
from __future__ import annotations

import dataclasses
import logging

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from pocketstack.clients import keymanager
from pocketstack.common import exceptions
from pocketstack.loadbalancer import validation as V

LOG = logging.getLogger(__name__)
SERVICE = "loadbalancer"


@dataclasses.dataclass
class TLSCert:
    certificate: x509.Certificate
    key: object  # a cryptography private key
    intermediates: list[x509.Certificate]

    def pem(self) -> bytes:
        """Certificate, key and intermediates in one PEM: HAProxy's crt file."""
        out = self.certificate.public_bytes(serialization.Encoding.PEM)
        out += self.key.private_bytes(serialization.Encoding.PEM,
                                      serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())
        for cert in self.intermediates:
            out += cert.public_bytes(serialization.Encoding.PEM)
        return out

    def host_names(self) -> list[str]:
        names = [a.value for a in self.certificate.subject.get_attributes_for_oid(
            NameOID.COMMON_NAME)]
        try:
            san = self.certificate.extensions.get_extension_for_class(
                x509.SubjectAlternativeName)
            names += san.value.get_values_for_type(x509.DNSName)
        except x509.ExtensionNotFound:
            pass
        return list(dict.fromkeys(names))


class UnreadablePKCS12(V.Invalid):
    pass


def _certs(data: bytes) -> list[x509.Certificate]:
    data = data.strip()
    if data.startswith(b"-----"):
        return x509.load_pem_x509_certificates(data)
    return [x509.load_der_x509_certificate(data)]


def _key(data: bytes, passphrase: bytes | None):
    data = data.strip()
    if data.startswith(b"-----"):
        return serialization.load_pem_private_key(data, passphrase)
    return serialization.load_der_private_key(data, passphrase)


def parse(parts: dict[str, bytes]) -> TLSCert:
    """A TLSCert from what a ref holds; ValueError when it is not a usable certificate."""
    if "pkcs12" in parts:
        try:
            key, cert, extra = pkcs12.load_key_and_certificates(parts["pkcs12"], None)
        except Exception as error:  # noqa: BLE001 - any unreadable bundle
            raise UnreadablePKCS12(
                f"The PKCS12 bundle is unreadable. Please check the PKCS12 bundle validity. "
                f"In addition, make sure it does not require a pass phrase. Error: "
                f"{error}") from None
        if cert is None or key is None:
            raise ValueError("the PKCS12 bundle holds no certificate and key")
        chain = list(extra or [])
    else:
        if "certificate" not in parts or "private_key" not in parts:
            raise ValueError("a certificate container needs a certificate and a private key")
        [cert, *chain] = _certs(parts["certificate"])
        if parts.get("intermediates"):
            chain += _certs(parts["intermediates"])
        key = _key(parts["private_key"], parts.get("private_key_passphrase") or None)
    if key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo) != \
            cert.public_key().public_bytes(serialization.Encoding.DER,
                                           serialization.PublicFormat.SubjectPublicKeyInfo):
        raise ValueError("Key and x509 certificate do not match")
    return TLSCert(cert, key, chain)


def load(ref: str, ctx=None) -> TLSCert:
    """The certificate a ref names, read for the user of ``ctx`` or, without one, as the
    octavia service user (whom the user's create granted read access)."""
    client = keymanager.KeyManagerClient(ctx, caller=SERVICE, as_service=ctx is None)
    return parse(client.certificate_parts(ref))


def check(ctx, refs: list[str]) -> None:
    """Octavia's listener _validate_tls_refs: every ref readable by the user and a
    certificate with its key; the octavia user is granted read on each."""
    bad = []
    user_id = None
    for ref in refs:
        try:
            load(ref, ctx)
            user_id = user_id or keymanager.service_user_id(SERVICE)
            keymanager.KeyManagerClient(ctx, caller=SERVICE).grant_read(ref, user_id)
        except UnreadablePKCS12:
            raise
        except (exceptions.PocketstackError, ValueError, TypeError, KeyError) as error:
            LOG.info("Certificate %s is not usable: %s", ref, error)
            bad.append(ref)
    if bad:
        raise V.Invalid(f"Could not retrieve certificate: {bad}")


def load_secret(ref: str, ctx=None) -> bytes:
    """A secret's payload (a CA bundle or a CRL, PEM), read for the user of ``ctx`` or,
    without one, as the octavia service user (Octavia's cert manager get_secret)."""
    client = keymanager.KeyManagerClient(ctx, caller=SERVICE, as_service=ctx is None)
    return client._payload(ref)  # noqa: SLF001 - the payload read certificate_parts uses


def check_ca_and_crl(ctx, ca_ref: str, crl_ref: str | None) -> None:
    """Octavia's _validate_client_ca_and_crl_refs: the CA (and the CRL) readable by the
    user, the octavia user granted read on them, the CA an x509 PEM certificate, the CRL
    a PEM revocation list signed by that CA."""
    bad, payloads = [], {}
    user_id = None
    for ref in [ca_ref] + ([crl_ref] if crl_ref else []):
        try:
            payloads[ref] = load_secret(ref, ctx)
            user_id = user_id or keymanager.service_user_id(SERVICE)
            keymanager.KeyManagerClient(ctx, caller=SERVICE).grant_read(ref, user_id)
        except (exceptions.PocketstackError, ValueError, TypeError, KeyError) as error:
            LOG.info("Secret %s is not usable: %s", ref, error)
            bad.append(ref)
    if bad:
        raise V.Invalid(f"Could not retrieve certificate: {bad}")
    try:
        ca = x509.load_pem_x509_certificate(payloads[ca_ref])
    except Exception as error:  # noqa: BLE001 - any unreadable certificate
        raise V.validation_failure(
            f"The client authentication CA certificate is invalid. It must be a valid x509 "
            f"PEM format certificate. Error: {error}") from None
    if crl_ref:
        try:
            crl = x509.load_pem_x509_crl(payloads[crl_ref])
        except Exception as error:  # noqa: BLE001 - any unreadable list
            raise V.validation_failure(
                f"The client authentication certificate revocation list is invalid. It "
                f"must be a valid x509 PEM format certificate revocation list. Error: "
                f"{error}") from None
        try:
            valid = crl.is_signature_valid(ca.public_key())
        except (TypeError, ValueError):
            valid = False
        if not valid:
            raise V.validation_failure("The CRL specified is not valid for client "
                                       "certificate authority reference supplied.")
