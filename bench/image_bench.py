"""Image data throughput: 1 GiB upload and download through the Glance API vs `cp`.

    .venv/bin/python bench/image_bench.py [--size-mib 1024] [--runs 2] [--dir DIR]

Starts `pocketstack up` as its own process on a free port (so its RSS is its own), then
on the same disk and in the same run:

* `cp` of the file (the yardstick),
* upload: curl -T through PUT /v2/images/{id}/file (queued → active, md5 + sha512),
* download: curl GET /v2/images/{id}/file into a file,
* peak RSS growth of the server during the upload (sampled every 5 ms and VmHWM).

curl is the client so the figures measure the server, not a Python client; the same
upload through openstacksdk is reported too. Targets (issue 3): upload ≥ 50% of cp,
download ≥ 70% of cp, RSS growth < 64 MiB. Results are printed and written to
bench/results/image_bench.json. Every GiB file is deleted at the end.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import httpx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV_BIN = os.path.dirname(sys.executable)
PASSWORD = "bench-secret"
MiB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


class RssSampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.running = pid, 0, True

    def run(self):
        while self.running:
            self.peak = max(self.peak, rss_kib(self.pid))
            time.sleep(0.005)

    def stop(self) -> int:
        self.running = False
        self.join()
        return self.peak


def make_file(path: str, size: int) -> str:
    """Random data (64 MiB block repeated) and its sha512."""
    block = os.urandom(64 * MiB)
    sha = hashlib.sha512()
    with open(path, "wb") as f:
        left = size
        while left:
            piece = block[:min(left, len(block))]
            f.write(piece)
            sha.update(piece)
            left -= len(piece)
    return sha.hexdigest()


def hash_ceiling(path: str) -> float:
    """Seconds to md5 + sha512 the file with the two digests on two threads, as the server
    does: the least CPU any upload that reports both hashes must spend."""
    import concurrent.futures

    md5, sha = hashlib.md5(), hashlib.sha512()
    with concurrent.futures.ThreadPoolExecutor(2) as pool, open(path, "rb") as f:
        start = time.perf_counter()
        while block := f.read(4 * MiB):
            list(pool.map(lambda h: h.update(block), (md5, sha)))
        return time.perf_counter() - start


def sync():
    subprocess.run(["sync"], check=True)


def timed(cmd: list[str]) -> float:
    sync()
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


class Server:
    def __init__(self, data_dir: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [os.path.join(VENV_BIN, "pocketstack"), "up", "--data-dir", data_dir,
             "--port", str(self.port), "--admin-password", PASSWORD],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/image/versions").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise RuntimeError("pocketstack did not start: " + self.proc.stderr.read().decode())
        self.session = self._session()
        self.token = self.session.get_token()

    def _session(self):
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        auth = v3.Password(auth_url=self.url + "/identity", username="admin",
                           password=PASSWORD, project_name="admin",
                           user_domain_id="default", project_domain_id="default")
        return session.Session(auth=auth)

    def api(self, method, path, **kwargs):
        headers = {"X-Auth-Token": self.token, **kwargs.pop("headers", {})}
        r = httpx.request(method, self.url + "/image" + path, headers=headers, timeout=600,
                          **kwargs)
        r.raise_for_status()
        return r

    def new_image(self, name: str) -> str:
        return self.api("POST", "/v2/images", json={
            "name": name, "disk_format": "raw", "container_format": "bare"}).json()["id"]

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def curl_upload(server: Server, image_id: str, path: str) -> float:
    return timed(["curl", "-sS", "--fail", "-X", "PUT", "-T", path,
                  "-H", f"X-Auth-Token: {server.token}",
                  "-H", "Content-Type: application/octet-stream",
                  f"{server.url}/image/v2/images/{image_id}/file"])


def curl_download(server: Server, image_id: str, path: str) -> float:
    return timed(["curl", "-sS", "--fail", "-o", path, "-H", f"X-Auth-Token: {server.token}",
                  f"{server.url}/image/v2/images/{image_id}/file"])


def sdk_upload(server: Server, path: str) -> tuple[float, str]:
    import openstack

    conn = openstack.connection.Connection(session=server.session, region_name="RegionOne")
    sync()
    start = time.perf_counter()
    image = conn.image.create_image("bench-sdk", filename=path, disk_format="raw",
                                    container_format="bare", allow_duplicates=True)
    return time.perf_counter() - start, image.id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=2, help="runs of each measurement; the "
                        "best is reported")
    parser.add_argument("--dir", default=None, help="work directory (default: a temp dir "
                        "under /tmp); the data dir and files go there, on one disk")
    parser.add_argument("--no-sdk", action="store_true", help="skip the openstacksdk upload")
    args = parser.parse_args()
    size = args.size_mib * MiB
    work = tempfile.mkdtemp(prefix="image-bench-", dir=args.dir)
    src, dst = os.path.join(work, "source.img"), os.path.join(work, "copy.img")
    server = None
    try:
        print(f"writing a {args.size_mib} MiB test file in {work} …", flush=True)
        digest = make_file(src, size)
        server = Server(os.path.join(work, "data"))
        mbs = lambda seconds: size / MiB / seconds  # noqa: E731

        cp_times, up_times, down_times, rss_growth = [], [], [], []
        for run in range(args.runs):
            cp_times.append(timed(["cp", src, dst]))
            os.unlink(dst)

            image_id = server.new_image(f"bench-{run}")
            before = rss_kib(server.proc.pid)
            with open(f"/proc/{server.proc.pid}/clear_refs", "w") as f:
                f.write("5")  # reset VmHWM to the current RSS
            sampler = RssSampler(server.proc.pid)
            sampler.start()
            up_times.append(curl_upload(server, image_id, src))
            peak = max(sampler.stop(), rss_kib(server.proc.pid, "VmHWM"))
            rss_growth.append((peak - before) / 1024)
            shown = server.api("GET", f"/v2/images/{image_id}").json()
            assert shown["status"] == "active" and shown["size"] == size, shown
            assert shown["os_hash_value"] == digest, "uploaded data differs"

            down_times.append(curl_download(server, image_id, dst))
            with open(dst, "rb") as f:
                got = hashlib.file_digest(f, "sha512").hexdigest()
            assert got == digest, "downloaded data differs"
            os.unlink(dst)
            server.api("DELETE", f"/v2/images/{image_id}")

        sdk_seconds = None
        if not args.no_sdk:
            sdk_seconds, sdk_id = sdk_upload(server, src)
            server.api("DELETE", f"/v2/images/{sdk_id}")

        hashing = mbs(hash_ceiling(src))
        cp, up, down = mbs(min(cp_times)), mbs(min(up_times)), mbs(min(down_times))
        results = {
            "size_mib": args.size_mib, "runs": args.runs,
            "cp_mb_s": round(cp, 1), "upload_mb_s": round(up, 1),
            "download_mb_s": round(down, 1),
            "upload_vs_cp": round(up / cp, 2), "download_vs_cp": round(down / cp, 2),
            "upload_rss_growth_mib": round(max(rss_growth), 1),
            "all_seconds": {"cp": cp_times, "upload": up_times, "download": down_times},
            "sdk_upload_mb_s": round(mbs(sdk_seconds), 1) if sdk_seconds else None,
            "md5_plus_sha512_mb_s": round(hashing, 1),
            "load_average": os.getloadavg(),
            "targets": {"upload_vs_cp": 0.5, "download_vs_cp": 0.7,
                        "upload_rss_growth_mib": 64},
            "cpus": os.cpu_count(),
        }
        print(f"cp        {cp:8.1f} MB/s")
        print(f"upload    {up:8.1f} MB/s  = {up / cp:4.0%} of cp  (target ≥ 50%)")
        print(f"download  {down:8.1f} MB/s  = {down / cp:4.0%} of cp  (target ≥ 70%)")
        print(f"server RSS growth during upload: {max(rss_growth):.1f} MiB (target < 64)")
        print(f"md5 + sha512 of the file in this process (the upload's CPU floor): "
              f"{hashing:.1f} MB/s")
        print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on "
              f"{os.cpu_count()} CPUs")
        if sdk_seconds:
            print(f"openstacksdk upload (client-bound): {mbs(sdk_seconds):.1f} MB/s")
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        with open(os.path.join(HERE, "results", "image_bench.json"), "w") as f:
            json.dump(results, f, indent=2)
        ok = up / cp >= 0.5 and down / cp >= 0.7 and max(rss_growth) < 64
        return 0 if ok else 1
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
