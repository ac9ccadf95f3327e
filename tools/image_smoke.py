"""What `tools/build_image.sh --check` runs inside the built image: the all-in-one cloud
starts, and a volume is made from a qcow2 image (qemu-img converts it: the reason the
image has qemu-utils). Standard library only: the image holds pocketstack, not the
clients. Exits 0 when the volume is available, 1 with the reason otherwise.

    python3 image_smoke.py          (inside the image; picks a free port on 127.0.0.1)
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from email.message import Message

PASSWORD = "image-smoke"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(method: str, url: str, token: str | None = None, body=None,
         content_type: str = "application/json") -> tuple[int, Message, bytes]:
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    if token:
        request.add_header("X-Auth-Token", token)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def wait_for(what: str, seconds: float, probe):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.5)
    raise SystemExit(f"image smoke: {what} not within {seconds:.0f} s")


def login(base: str) -> tuple[str, dict]:
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": PASSWORD}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
    status, headers, raw = call("POST", base + "/identity/v3/auth/tokens", body=body)
    if status != 201:
        raise SystemExit(f"image smoke: login answered {status}: {raw[:300]!r}")
    catalog = {e["type"]: next(p["url"] for p in e["endpoints"] if p["interface"] == "public")
               for e in json.loads(raw)["token"]["catalog"]}
    return headers["X-Subject-Token"], catalog


def volume_from_image(token: str, catalog: dict, work: str) -> str:
    qcow2 = os.path.join(work, "tiny.qcow2")
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", qcow2, "64M"], check=True)
    image_url = catalog["image"].rstrip("/") + "/v2/images"
    status, _, raw = call("POST", image_url, token, {
        "name": "smoke", "disk_format": "qcow2", "container_format": "bare"})
    if status != 201:
        raise SystemExit(f"image smoke: image create answered {status}: {raw[:300]!r}")
    image_id = json.loads(raw)["id"]
    with open(qcow2, "rb") as f:
        status, _, raw = call("PUT", f"{image_url}/{image_id}/file", token, f.read(),
                              "application/octet-stream")
    if status != 204:
        raise SystemExit(f"image smoke: image upload answered {status}: {raw[:300]!r}")
    volumes = catalog["volumev3"].rstrip("/") + "/volumes"
    status, _, raw = call("POST", volumes, token, {"volume": {
        "size": 1, "imageRef": image_id, "name": "smoke"}})
    if status != 202:
        raise SystemExit(f"image smoke: volume create answered {status}: {raw[:300]!r}")
    volume_id = json.loads(raw)["volume"]["id"]

    def settled():
        volume = json.loads(call("GET", f"{volumes}/{volume_id}", token)[2])["volume"]
        return volume["status"] if volume["status"] in ("available", "error") else None
    return wait_for("the volume from the image", 120, settled)


def main() -> int:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="pocketstack-image-smoke-") as work:
        env = dict(os.environ, POCKETSTACK_HOME=os.path.join(work, "data"),
                   POCKETSTACK_ADMIN_PASSWORD=PASSWORD)
        # The build shares the machine's network: its DNS server takes a free port, not
        # the default 5354 another cloud here may hold.
        conf = os.path.join(work, "smoke.conf")
        with open(conf, "w") as f:
            f.write("[dns]\nlisten = 127.0.0.1:0\n")
        log = open(os.path.join(work, "cloud.log"), "w")
        cloud = subprocess.Popen(["pocketstack", "up", "--port", str(port), "--config-file",
                                  conf], env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            def answers():
                try:
                    return cloud.poll() is not None or \
                        call("GET", base + "/identity/v3")[0] == 200
                except OSError:  # not listening yet
                    return False
            wait_for("the identity API", 120, answers)
            if cloud.poll() is not None:
                raise SystemExit(f"image smoke: the cloud exited with {cloud.returncode}")
            token, catalog = login(base)
            status = volume_from_image(token, catalog, work)
        except BaseException:
            log.flush()
            with open(log.name) as f:
                sys.stderr.write(f.read()[-3000:])
            raise
        finally:
            cloud.terminate()
            cloud.wait(30)
    print(f"image smoke: a volume from a qcow2 image is {status}")
    return 0 if status == "available" else 1


if __name__ == "__main__":
    sys.exit(main())
