"""FormPOST: a signed HTML form uploads files straight into a container."""
from __future__ import annotations

import hashlib
import hmac
import os
import time

import requests


def _form(path, key, redirect="", max_size=1024, max_count=2, expires=None):
    expires = expires or int(time.time()) + 60
    body = f"{path}\n{redirect}\n{max_size}\n{max_count}\n{expires}"
    signature = hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()
    return {"redirect": redirect, "max_file_size": str(max_size),
            "max_file_count": str(max_count), "expires": str(expires),
            "signature": signature}


def test_signed_form_uploads_files_and_redirects(owner, container):
    owner.swift.post_account({"X-Account-Meta-Temp-URL-Key": "form-key"})
    base, path = owner.url.split("/object-store")
    path = f"{path}/{container}/up/"
    url = f"{base}/object-store{path}"
    large = os.urandom(3 << 20)  # parsed as it arrives, across many reads
    files = {"file1": ("a.txt", b"first file", "text/plain"),
             "file2": ("b.bin", b"\x00\x01" * 100, "application/x-b"),
             "file3": ("large", large)}
    r = requests.post(url, data=_form(path, "form-key", "https://example.com/done",
                                      max_size=4 << 20, max_count=3),
                      files=files, allow_redirects=False)
    assert r.status_code == 303
    assert r.headers["Location"] == "https://example.com/done?status=201&message="
    headers, body = owner.swift.get_object(container, "up/a.txt")
    assert body == b"first file" and headers["content-type"] == "text/plain"
    assert owner.swift.get_object(container, "up/b.bin")[1] == b"\x00\x01" * 100
    assert owner.swift.get_object(container, "up/large")[1] == large
    # without a redirect: a short page with the status
    r = requests.post(url, data=_form(path, "form-key"), files={"f": ("c", b"c")})
    assert r.status_code == 201 and r.text == "<h1>201 Created</h1><p></p>"


def test_form_limits_signature_and_expiry(owner, container):
    owner.swift.post_container(container, {"X-Container-Meta-Temp-URL-Key": "ckey"})
    base, path = owner.url.split("/object-store")
    path = f"{path}/{container}"
    url = f"{base}/object-store{path}"
    r = requests.post(url, data=_form(path, "ckey", max_size=5),
                      files={"f": ("big", b"more than five")})
    assert (r.status_code, r.text) == (400, "<h1>400 Bad Request</h1><p>max_file_size "
                                            "exceeded</p>")
    r = requests.post(url, data=_form(path, "ckey", max_count=1),
                      files=[("f", ("x1", b"1")), ("g", ("x2", b"2"))])
    assert r.status_code == 400 and "max_file_count exceeded" in r.text
    r = requests.post(url, data=_form(path, "wrong"), files={"f": ("y", b"y")})
    assert r.status_code == 401 and "invalid signature" in r.text
    r = requests.post(url, data=_form(path, "ckey", expires=int(time.time()) - 5),
                      files={"f": ("z", b"z")})
    assert r.status_code == 401 and "form expired" in r.text
    # only the one file the count allowed was stored
    assert [o["name"] for o in owner.swift.get_container(container)[1]] == ["x1"]
