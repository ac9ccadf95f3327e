"""The userspace UDP balancer on its own (no namespace: loopback addresses): flows
alternate between two echo members, a member's closed port turns it DOWN under a
UDP-CONNECT monitor and the flows go to the other, a SIGHUP reads a new configuration;
SOURCE_IP keeps a client address on one member; idle flows go after the listener's
timeout; `pocketstack audit` names a balancer whose load balancer is gone."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import uuid

from helpers.cloud import wait_for


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Echo:
    """Answers each datagram with its name."""

    def __init__(self, name: str):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.name = name.encode()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                _, peer = self.sock.recvfrom(65535)
                self.sock.sendto(self.name, peer)
            except OSError:
                return


def _ask(port: int, source: str = "127.0.0.1") -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((source, 0))
        sock.settimeout(2)
        sock.sendto(b"?", ("127.0.0.1", port))
        try:
            return sock.recv(100).decode()
        except OSError:
            return "-"


def _status(folder: str) -> dict:
    try:
        with open(os.path.join(folder, "udp-status.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def test_the_udp_balancer_alone_and_in_the_audit(cloud):
    from pocketstack.cli.audit import run_checks
    from pocketstack.loadbalancer import udp_balancer

    ghost = str(uuid.uuid4())
    folder = os.path.join(cloud.data_dir, "loadbalancer", ghost)
    os.makedirs(folder)
    one, two = Echo("one"), Echo("two")
    port = _free_port()

    def write(members):
        conf = {"listeners": [{"id": "L", "address": "127.0.0.1", "port": port,
                               "timeout": 50000, "pool": {
                                   "id": "P", "algorithm": "ROUND_ROBIN",
                                   "monitor": {"type": "UDP-CONNECT", "delay": 1,
                                               "timeout": 1, "max_retries": 1,
                                               "max_retries_down": 1},
                                   "members": members}}]}
        with open(os.path.join(folder, "udp.json"), "w") as f:
            json.dump(conf, f)

    members = [{"id": "m1", "address": "127.0.0.1", "port": one.port},
               {"id": "m2", "address": "127.0.0.1", "port": two.port}]
    write(members)
    proc = subprocess.Popen([sys.executable, udp_balancer.__file__, folder])
    try:
        wait_for(lambda: _status(folder).get("members") == {"m1": "UP", "m2": "UP"}, 30,
                 "both members UP", interval=0.1)
        answers = [_ask(port) for _ in range(4)]
        assert sorted(answers) == ["one", "one", "two", "two"], answers
        assert answers[0] != answers[1] and answers[0] == answers[2], answers

        one.sock.close()  # its port closed: ICMP port unreachable
        wait_for(lambda: _status(folder).get("members") == {"m1": "DOWN", "m2": "UP"}, 30,
                 "the closed member DOWN", interval=0.1)
        assert {_ask(port) for _ in range(4)} == {"two"}

        three = Echo("three")
        write([members[1], {"id": "m3", "address": "127.0.0.1", "port": three.port,
                            "weight": 3}])
        proc.send_signal(signal.SIGHUP)
        wait_for(lambda: _status(folder).get("members") == {"m2": "UP", "m3": "UP"}, 30,
                 "the new member UP", interval=0.1)
        answers = [_ask(port) for _ in range(8)]
        assert answers.count("three") == 6 and answers.count("two") == 2, answers

        found = run_checks(stuck_after=300)["load balancers"]
        assert f"UDP balancer process {proc.pid} serves load balancer {ghost}, which is " \
               f"gone" in found, found
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(folder)
    assert not any(ghost in p for p in run_checks(stuck_after=300)["load balancers"])


def test_source_ip_keeps_a_client_address_on_one_member_and_idle_flows_go(tmp_path):
    from pocketstack.loadbalancer import udp_balancer

    one, two = Echo("one"), Echo("two")
    port = _free_port()
    folder = str(tmp_path)
    with open(os.path.join(folder, "udp.json"), "w") as f:
        json.dump({"listeners": [{"id": "L", "address": "127.0.0.1", "port": port,
                                  "timeout": 1000, "pool": {
                                      "id": "P", "algorithm": "SOURCE_IP",
                                      "members": [
                                          {"id": "m1", "address": "127.0.0.1",
                                           "port": one.port},
                                          {"id": "m2", "address": "127.0.0.1",
                                           "port": two.port}]}}]}, f)
    proc = subprocess.Popen([sys.executable, udp_balancer.__file__, folder])
    try:
        wait_for(lambda: _ask(port) != "-", 30, "the balancer answering", interval=0.1)
        for source in ("127.0.0.2", "127.0.0.3"):
            assert len({_ask(port, source) for _ in range(6)}) == 1, source
        seen = {_ask(port, f"127.0.1.{i}") for i in range(1, 21)}
        assert seen == {"one", "two"}, seen

        def listener() -> dict:
            return _status(folder).get("listeners", {}).get("L", {})
        wait_for(lambda: listener().get("total_connections", 0) >= 33, 10,
                 "the flows counted", interval=0.1)
        # Idle for the listener's timeout (1 s), the flows go.
        wait_for(lambda: listener().get("active_connections") == 0, 30,
                 "the idle flows gone", interval=0.1)
    finally:
        proc.terminate()
        proc.wait(10)
