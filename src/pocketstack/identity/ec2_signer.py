"""AWS-style request signatures as Keystone checks them: EC2 (keystoneclient's Ec2Signer:
signature versions 0, 1, 2 and 4) for /v3/ec2tokens, and S3 (v1 HMAC-SHA1 or v4 over a
string to sign the caller already built) for /v3/s3tokens. Every function returns the
expected signature, or raises ValueError for a request it cannot sign."""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import urllib.parse


def _utf8(value) -> bytes:
    if not isinstance(value, (str, bytes)):
        value = str(value)
    return value.encode() if isinstance(value, str) else value


def _b64_hmac(secret: str, data: bytes, digest) -> str:
    return base64.b64encode(hmac.new(secret.encode(), data, digest).digest()).decode()


def _canonical_qs(params: dict) -> str:
    return "&".join(urllib.parse.quote(key, safe="") + "=" +
                    urllib.parse.quote(_utf8(params[key]), safe="-_~")
                    for key in sorted(params))


def ec2(secret: str, credentials: dict) -> str:
    params = credentials.get("params") or {}
    version = params.get("SignatureVersion")
    if version == "0":
        return _b64_hmac(secret, _utf8(params["Action"] + params["Timestamp"]), hashlib.sha1)
    if version == "1":
        data = b"".join(_utf8(k) + _utf8(params[k]) for k in sorted(params, key=str.lower))
        return _b64_hmac(secret, data, hashlib.sha1)
    if version == "2":
        params = dict(params, SignatureMethod="HmacSHA256")
        text = (f"{credentials['verb']}\n{credentials['host']}\n{credentials['path']}\n"
                + _canonical_qs(params))
        return _b64_hmac(secret, text.encode(), hashlib.sha256)
    if _is_v4(credentials):
        return _ec2_v4(secret, credentials)
    raise ValueError(f"Unknown signature version: {version}" if version
                     else "Unexpected signature format")


def _is_v4(credentials: dict) -> bool:
    auth = (credentials.get("headers") or {}).get("Authorization", "")
    return auth.startswith("AWS4-HMAC-SHA256") or (
        (credentials.get("params") or {}).get("X-Amz-Algorithm") == "AWS4-HMAC-SHA256")


def _ec2_v4(secret: str, credentials: dict) -> str:
    params, headers = credentials.get("params") or {}, credentials.get("headers") or {}
    verb = credentials["verb"]

    def auth_param(name):
        if "Authorization" in headers:
            return headers["Authorization"].partition(f"{name}=")[2].split(",")[0]
        return params.get(f"X-Amz-{name}")
    lower = {k.lower().strip(): v.strip() for k, v in headers.items()}
    strip_port = re.match(r"Boto/2\.[0-9]\.[0-2]", lower.get("user-agent", ""))
    signed = auth_param("SignedHeaders") or ""
    lines = []
    for name in signed.split(";"):
        if name in lower:
            value = lower[name].split(":")[0] if name == "host" and strip_port else lower[name]
            lines.append(f"{name}:{value}")
    canonical = "\n".join((verb.upper(), credentials["path"],
                           _canonical_qs(params) if verb.upper() != "POST" else "",
                           "\n".join(lines) + "\n", signed, credentials["body_hash"]))
    scope = (auth_param("Credential") or "").split("/")
    date = headers.get("X-Amz-Date") or params.get("X-Amz-Date") or ""
    if len(scope) < 5 or not date.startswith(scope[1]):
        raise ValueError("Request date mismatch error")
    to_sign = "\n".join(("AWS4-HMAC-SHA256", date, "/".join(scope[1:]),
                         hashlib.sha256(canonical.encode()).hexdigest()))
    return _v4_signature(secret, [_utf8(p) for p in scope[1:4]], to_sign.encode())


def _v4_signature(secret: str, scope: list[bytes], to_sign: bytes) -> str:
    key = ("AWS4" + secret).encode()
    for part in (*scope, b"aws4_request"):
        key = hmac.new(key, part, hashlib.sha256).digest()
    return hmac.new(key, to_sign, hashlib.sha256).hexdigest()


def s3(secret: str, token_b64: str) -> str:
    """Keystone's s3tokens: ``token`` is the base64 of the string to sign."""
    try:
        to_sign = base64.urlsafe_b64decode(str(token_b64))
    except ValueError:
        raise ValueError("Invalid EC2 signature.") from None
    if to_sign[:4] != b"AWS4":
        return base64.encodebytes(hmac.new(secret.encode(), to_sign, hashlib.sha1)
                                  .digest()).decode().strip()
    parts = to_sign.split(b"\n")
    scope = parts[2].split(b"/") if len(parts) == 4 else []
    if parts[0] != b"AWS4-HMAC-SHA256" or len(scope) != 4 or scope[3] != b"aws4_request" \
            or scope[2] not in (b"s3", b"iam", b"sts"):
        raise ValueError("Invalid EC2 signature.")
    return _v4_signature(secret, scope[:3], to_sign)
