"""bench/compare.py runs every phase against a cloud and leaves nothing behind."""
from __future__ import annotations

import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def compare():
    spec = importlib.util.spec_from_file_location(
        "bench_compare", os.path.join(HERE, "..", "..", "bench", "compare.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_all_phases_complete_and_clean_up(cloud, compare, capsys):
    [out] = compare.main([
        "--auth-url", cloud.auth_url, "--username", "admin", "--password",
        cloud.admin_password, "--project-name", "admin", "--tokens", "2", "--ports", "2",
        "--boots", "2", "--burst", "3", "--clients", "2", "--image-mib", "1",
        "--timeout", "60"])
    assert "failed" not in out, out.get("failed")
    assert out["token_ms"]["n"] == 2 and out["port_ms"]["n"] == 2
    assert out["boot_client_ms"]["n"] == 2 and out["boot_errors"] == 0
    # pocketstack shows the create action's events, so the server-side figure exists.
    assert out["boot_server_ms"]["n"] == 2
    assert out["burst"]["error"] == 0 and out["burst"]["unfinished"] == 0
    assert out["delete"]["unfinished"] == 0
    assert out["image"]["mib"] == 1
    assert out["left_behind"] == {}
    # Nothing with the run's prefix is left in the cloud.
    sdk = cloud.sdk()
    leftovers = [x.name for x in sdk.compute.servers()] + \
        [x.name for x in sdk.network.ports()] + [x.name for x in sdk.network.networks()] + \
        [x.name for x in sdk.image.images()]
    assert not [n for n in leftovers if n and n.startswith("cmp-")]
    table = capsys.readouterr().out
    assert "boot POST->ACTIVE" in table and cloud.auth_url in table


def test_bad_phase_is_refused(compare):
    with pytest.raises(SystemExit):
        compare.parse_args(["--phases", "token,nosuch"])
