"""`pocketstack service …` refuses to start a split cloud it cannot run, with one line that
says what to change (no broker or database needed for these)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

EXE = os.path.join(os.path.dirname(sys.executable), "pocketstack")


def _run(tmp_path, *args, conf: str):
    config_file = tmp_path / "pocketstack.conf"
    config_file.write_text(conf)
    env = {k: v for k, v in os.environ.items() if k != "POCKETSTACK_HOME"}
    return subprocess.run([EXE, "service", *args, "--data-dir", str(tmp_path / "data"),
                           "--config-file", str(config_file)],
                          capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize("role", [["api", "--port", "1"], ["conductor"], ["scheduler"],
                                  ["compute", "--host", "c1"]], ids=lambda r: r[0])
def test_split_roles_refuse_the_in_process_bus(tmp_path, role):
    result = _run(tmp_path, *role, conf="[DEFAULT]\nhost = ctl\n")
    assert result.returncode == 1
    assert "transport_url is inproc://" in result.stderr
    assert "rabbit://" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "data" / "pocketstack.db").exists()  # nothing was written


def test_an_agent_without_its_service_password_says_where_it_goes(tmp_path):
    """A compute node needs no keys or identity tables, only the nova service user's
    password (it logs in at the identity API): without it, one clear line."""
    result = _run(tmp_path, "compute", "--host", "c1",
                  conf="[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:5672/\n"
                       "[database]\nconnection = sqlite:////nonexistent/x.db\n")
    assert result.returncode == 1
    assert "No password for the service user nova" in result.stderr
    assert "[service_user] nova_password" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_config_file_is_named(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "POCKETSTACK_HOME"}
    result = subprocess.run([EXE, "service", "scheduler", "--data-dir", str(tmp_path),
                             "--config-file", str(tmp_path / "nope.conf")],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 1
    assert f"Config file {tmp_path / 'nope.conf'} does not exist." in result.stderr


RABBIT = "[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:5672/\n"


def test_a_compute_host_on_the_conductor_refuses_a_database_url(tmp_path):
    """A compute host that reaches the cloud through the conductor must not hold the
    database's credential: a [database] connection in its config is refused, naming the
    file (ignoring it would leave the password on the host)."""
    result = _run(tmp_path, "compute", "--host", "c1",
                  conf=RABBIT + "[database]\nconnection = postgresql+psycopg://nova:secret@db/x\n"
                                "[compute]\ndatabase_access = conductor\n")
    assert result.returncode == 1
    assert "[database] connection is set" in result.stderr
    assert str(tmp_path / "pocketstack.conf") in result.stderr
    assert "database_access = conductor" in result.stderr
    assert "secret" not in result.stderr and "Traceback" not in result.stderr



def test_a_compute_host_on_the_conductor_needs_its_own_users_password(tmp_path):
    """Without its own identity user's password a host on the conductor could not prove
    its name: it refuses to start, saying how to make one."""
    result = _run(tmp_path, "compute", "--host", "c1",
                  conf=RABBIT + "[compute]\ndatabase_access = conductor\n"
                                "[service_user]\nnova_password = nova-secret\n")
    assert result.returncode == 1
    assert "No password for the host user nova-compute-c1" in result.stderr
    assert "pocketstack host-credential c1" in result.stderr
    assert "Traceback" not in result.stderr
