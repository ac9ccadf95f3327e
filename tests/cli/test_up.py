"""`pocketstack up` and `pocketstack rotate-keys`, run as a user runs them: real commands in
subprocesses on free ports with temporary data dirs."""
from __future__ import annotations

import configparser
import re
import os
import signal
import stat
import subprocess
import time

import httpx
import pytest
import yaml
from helpers.up_process import EXE, UpProcess, free_port, run_up

from pocketstack.common import config

FAST = "[identity]\npassword_hash_rounds = 4\n"


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _token(cloud: UpProcess, password: str | None = None) -> str:
    return cloud.session(password=password).get_token()


def _validates(cloud: UpProcess, token: str) -> int:
    return httpx.get(cloud.auth_url + "/v3/auth/tokens",
                     headers={"X-Auth-Token": token, "X-Subject-Token": token}).status_code


@pytest.fixture(scope="module")
def first_up(tmp_path_factory):
    """A cloud started on an empty data dir with no password given."""
    cloud = UpProcess(str(tmp_path_factory.mktemp("first") / "data")).start()
    yield cloud
    cloud.stop()


def test_first_start_writes_private_client_files(first_up):
    data = first_up.data_dir
    assert _mode(data) == 0o700
    for name in ("clouds.yaml", "openrc", "admin-password", "pocketstack.conf"):
        assert _mode(os.path.join(data, name)) == 0o600, name
    password = first_up.admin_password()
    clouds = yaml.safe_load(open(os.path.join(data, "clouds.yaml")))["clouds"]["pocketstack"]
    assert clouds["auth"]["auth_url"] == first_up.auth_url
    assert clouds["auth"]["password"] == password
    assert clouds["region_name"] == "RegionOne"
    openrc = open(os.path.join(data, "openrc")).read()
    assert f"export OS_AUTH_URL={first_up.auth_url}\n" in openrc
    assert f"export OS_PASSWORD='{password}'\n" in openrc


def test_clouds_yaml_works_with_openstacksdk(first_up, monkeypatch):
    import openstack

    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", os.path.join(first_up.data_dir, "clouds.yaml"))
    conn = openstack.connect(cloud="pocketstack")
    assert conn.identity.find_project("admin") is not None
    assert {s.type for s in conn.identity.services()} >= {
        "identity", "compute", "image", "network", "block-storage"}


def test_summary_shows_url_password_and_next_commands(first_up):
    out = first_up.output()
    assert f"pocketstack is up at {first_up.url} (bootstrapped in " in out
    # stdout is a file here: the password stays in its 0600 file, the output says where
    # (tests/hardening/test_hardening_files.py shows it goes to a terminal).
    assert first_up.admin_password() not in out
    assert f"{first_up.data_dir}/admin-password" in out
    assert (f"export OS_CLIENT_CONFIG_FILE={first_up.data_dir}/clouds.yaml "
            "OS_CLOUD=pocketstack") in out
    assert "openstack token issue" in out
    assert "Traceback" not in out


def test_config_file_documents_every_option(first_up):
    text = open(os.path.join(first_up.data_dir, "pocketstack.conf")).read()
    parser = configparser.ConfigParser()
    parser.read_string(text)
    for group, opts in config.service_opts().items():
        assert f"[{group}]" in text
        for opt in opts:
            assert f"\n#{opt.dest} = " in text, f"[{group}] {opt.dest} is not in the sample"
            assert opt.help, f"[{group}] {opt.dest} has no help"
    # Everything is commented out: the file sets nothing.
    assert all(not parser.items(section) for section in parser.sections())


def test_second_up_on_a_data_dir_in_use_fails_fast(first_up):
    proc = run_up(first_up.data_dir, "--port", str(free_port()), timeout=30)
    assert proc.returncode == 1
    assert "already running" in proc.stderr and first_up.data_dir in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert first_up.proc.poll() is None
    assert httpx.get(first_up.auth_url + "/v3").status_code == 200


def test_rotate_keys_keeps_tokens_valid_for_one_rotation(first_up):
    token = _token(first_up)

    def rotate():
        proc = subprocess.run([EXE, "rotate-keys", "--data-dir", first_up.data_dir],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert "is primary" in rotate()
    assert sorted(os.listdir(os.path.join(first_up.data_dir, "fernet-keys"))) == ["0", "1", "2"]
    time.sleep(1.1)  # the server looks for new keys once a second
    assert _validates(first_up, token) == 200
    new_token = _token(first_up)  # issued with the new primary key
    assert _validates(first_up, new_token) == 200

    rotate()  # the key that signed the first token is now rotated out (3 keys are kept)
    deadline = time.monotonic() + 10
    while _validates(first_up, token) == 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _validates(first_up, token) == 401
    assert _validates(first_up, new_token) == 200


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_cleanly_and_restart_reuses_state(tmp_path, sig):
    data = str(tmp_path / "data")
    first = UpProcess(data, args=("--admin-password", "first-pass")).start()
    token = _token(first, "first-pass")
    with open(os.path.join(data, "pocketstack.conf"), "a") as f:
        f.write("\n# my own note\n")
    assert first.stop(sig) == 0
    assert "pocketstack stopped." in first.output()
    assert "Traceback" not in first.output()

    # The lock is released: the same data dir starts again, with the state it had.
    again = UpProcess(data, args=("--admin-password", "ignored-now")).start()
    try:
        assert "(ready in " in again.output()
        assert again.admin_password() == "first-pass"
        assert _validates(again, token) == 200  # same Fernet keys
        assert _token(again, "first-pass")
        assert "# my own note" in open(os.path.join(data, "pocketstack.conf")).read()
        assert "first-pass" not in again.output()
    finally:
        assert again.stop() == 0


def test_admin_password_from_the_environment(tmp_path):
    cloud = UpProcess(str(tmp_path / "data"),
                      env={"POCKETSTACK_ADMIN_PASSWORD": "from-env-pass"}).start()
    try:
        assert cloud.admin_password() == "from-env-pass"
        assert _token(cloud, "from-env-pass")
        assert "from-env-pass" not in cloud.output()  # only a generated one is printed
    finally:
        cloud.stop()


def test_config_file_option_is_honoured(tmp_path):
    conf = FAST + "[DEFAULT]\nregion_name = RegionTwo\n[token]\nexpiration = 600\n"
    cloud = UpProcess(str(tmp_path / "data"), conf=conf).start()
    try:
        access = cloud.session().auth.get_access(cloud.session())
        assert (access.expires - access.issued).total_seconds() == pytest.approx(600, abs=1)
        regions = {ep["region_id"] for entry in access.service_catalog.catalog
                   for ep in entry["endpoints"]}
        assert regions == {"RegionTwo"}
        # The given file is used as it is; no sample is written into the data dir.
        assert not os.path.exists(os.path.join(cloud.data_dir, "pocketstack.conf"))
    finally:
        cloud.stop()


# --- bad input: each is a one-line error and a non-zero exit, never a traceback ---------

def _conf_file(tmp_path, text: str) -> str:
    path = tmp_path / "bad.conf"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("make_args,expected", [
    (lambda tmp: ["--port", "70000"], "70000"),
    (lambda tmp: ["--port", "http"], "http"),
    (lambda tmp: ["--config-file", str(tmp / "missing.conf")], "does not exist"),
    (lambda tmp: ["--config-file", _conf_file(
        tmp, "[DEFAULT]\nmax_request_body_size = big\n")], "max_request_body_size"),
    (lambda tmp: ["--config-file", _conf_file(tmp, "[token]\nexpiration = 5\n")],
     "expiration"),
    (lambda tmp: ["--config-file", _conf_file(tmp, "this is not an ini file\n")],
     "bad.conf"),
    (lambda tmp: ["--config-file", _conf_file(
        tmp, f"[database]\nconnection = postgresql+psycopg://u@127.0.0.1:{free_port()}/x\n")],
     "database"),
    (lambda tmp: ["--config-file", _conf_file(tmp, "[database]\nconnection = nonsense\n")],
     "database"),
    (lambda tmp: ["--config-file", _conf_file(tmp, "[image]\nhashing_algorithm = crc32\n")],
     "hashing_algorithm"),
], ids=["port-out-of-range", "port-not-a-number", "config-missing", "bad-value",
        "value-below-minimum", "not-ini", "database-unreachable", "database-url-invalid",
        "unknown-hashing-algorithm"])
def test_bad_start_up_input_is_a_clear_error(tmp_path, make_args, expected):
    args = make_args(tmp_path)
    if "--port" not in args:
        args += ["--port", str(free_port())]
    proc = run_up(str(tmp_path / "data"), *args)
    assert proc.returncode in (1, 2), proc.stdout + proc.stderr
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "pocketstack is up" not in proc.stdout


def test_port_in_use_fails_before_writing_state(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = run_up(str(tmp_path / "data"), "--port", str(port))
    assert proc.returncode == 1
    assert f"Cannot listen on 127.0.0.1:{port}" in proc.stderr
    assert not os.path.exists(tmp_path / "data" / "pocketstack.db")
    assert not os.path.exists(tmp_path / "data" / "admin-password")


def test_rotate_keys_on_a_data_dir_never_started(tmp_path):
    proc = subprocess.run([EXE, "rotate-keys", "--data-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "No Fernet keys" in proc.stderr
    assert not os.path.exists(tmp_path / "fernet-keys")


def test_access_log_is_one_line_per_request_and_secrets_never_reach_the_log(tmp_path):
    conf = FAST + "[DEFAULT]\naccess_log = true\n"
    cloud = UpProcess(str(tmp_path / "data"), conf=conf,
                      args=("--debug", "--admin-password", "admin-Secret-1")).start()
    secrets = ["admin-Secret-1", "alice-Secret-2", "wrong-Secret-3", "alice-Secret-4"]
    try:
        admin = cloud.session(password="admin-Secret-1")
        ep = {"service_type": "identity"}
        user = admin.post("/v3/users", endpoint_filter=ep, json={"user": {
            "name": "alice", "password": "alice-Secret-2", "domain_id": "default"}}
        ).json()["user"]
        bad = httpx.post(cloud.auth_url + "/v3/auth/tokens", json={"auth": {"identity": {
            "methods": ["password"], "password": {"user": {
                "name": "alice", "domain": {"id": "default"}, "password": "wrong-Secret-3"}}}}})
        assert bad.status_code == 401
        alice = cloud.session(username="alice", password="alice-Secret-2", project_name=None)
        token = alice.get_token()
        r = httpx.post(f"{cloud.auth_url}/v3/users/{user['id']}/password",
                       headers={"X-Auth-Token": token},
                       json={"user": {"password": "alice-Secret-4",
                                      "original_password": "alice-Secret-2"}})
        assert r.status_code == 204, r.text
        secrets.append(token)
        secrets.append(admin.get_token())
    finally:
        assert cloud.stop() == 0
    log = cloud.output()
    for secret in secrets:
        assert secret not in log
    lines = [line for line in log.splitlines() if "pocketstack.access" in line]
    assert any(re.search(r'req-[0-9a-f-]{36} 127\.0\.0\.1 "POST /identity/v3/auth/tokens '
                         r'HTTP/1\.1" status: 401 len: \d+ time: \d+\.\d{4}$', line)
               for line in lines), "\n".join(lines)
    assert any(f'"POST /identity/v3/users/{user["id"]}/password HTTP/1.1" status: 204' in line
               for line in lines)


def test_broken_policy_yaml_stops_the_cloud_with_the_reason(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "policy.yaml").write_text('"admin_required": [unclosed\n')
    proc = run_up(str(data), "--port", str(free_port()))
    assert proc.returncode == 1
    assert "could not start" in proc.stderr
    assert "pocketstack is up" not in proc.stdout
    # The data dir is released: a fixed policy.yaml starts.
    (data / "policy.yaml").write_text('"admin_required": "role:admin"\n')
    cloud = UpProcess(str(data)).start()
    assert cloud.stop() == 0


def test_other_services_answer_once_started(first_up):
    """Identity answers first; requests to the rest wait for the warm-up, never fail."""
    token = _token(first_up)
    r = httpx.get(first_up.url + "/", timeout=30)
    assert r.status_code == 200
    for prefix in r.json()["services"].values():
        r = httpx.get(first_up.url + prefix + "/", headers={"X-Auth-Token": token},
                      timeout=30)
        assert r.status_code < 500, (prefix, r.status_code, r.text)
