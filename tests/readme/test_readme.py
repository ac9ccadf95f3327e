"""The README's commands work as written on a fresh copy of the repository —
every ```sh block, in order, in one shell, exactly as the README has them: `make up`
(which creates the venv and installs pocketstack and the openstack CLI), `source
.venv/bin/activate`, the CLI calls, `pocketstack demo`, the by-hand boot after it, the
fault-injection example, and the detach/wait/down commands.

The only differences from a new user's machine: HOME is a temporary directory (so
~/.local/share/pocketstack is fresh) and $POCKETSTACK_PORT picks a free port (the README
says it sets the port). It takes a few minutes (pip installs into a new venv): marked
`readme`."""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = [pytest.mark.readme, pytest.mark.timeout(1450)]


def sh_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)


def _fresh_copy(dest: str) -> None:
    """The repository's files as a clone would have them (tracked and new, not ignored:
    no .venv, no caches)."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        src = os.path.join(ROOT, name)
        if not os.path.isfile(src):
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, name))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_readme_has_the_commands_a_user_needs():
    text = open(os.path.join(ROOT, "README.md")).read()
    script = "\n".join(sh_blocks(text))
    for command in ("make up", "source .venv/bin/activate", "pocketstack demo",
                    "openstack server event list", "pocketstack trace",
                    "/pocketstack/v1/faults", "pocketstack up --detach", "pocketstack wait",
                    "pocketstack down"):
        assert command in script, command
    assert "seed" not in text.lower()
    # What the README's commands need beyond `make up` is named at the top.
    requirements = text[text.index("## Requirements"):text.index("## Quick start")]
    for need in ("Python 3.11", "python3-venv", "qemu-utils", "make libvirt", "dnsmasq-base",
                 "nftables", "iproute2"):
        assert need in requirements, need


# Sections whose commands need more than the quick start: run where the machine has it.
NEEDS = {"Real virtual machines": "libvirt", "Storage every host shares: Ceph": "ceph"}
AGAIN = ("Projects and users", "Boot a server", "Fault injection")


def _machine_has(need: str) -> str | None:
    """None if the machine can run a section that needs ``need``, else why not."""
    if os.geteuid() != 0:
        return "not root"
    if need == "libvirt":
        probe = subprocess.run(["virsh", "-c", "qemu:///system", "version"],
                               capture_output=True) if shutil.which("virsh") else None
        return None if probe and probe.returncode == 0 else "no running libvirtd"
    return None if shutil.which("ceph-mon") else "no ceph-mon (make ceph installs it)"


def sections(text: str) -> list[tuple[str, str]]:
    """(heading, its ```sh blocks joined), in the README's order, for sections with any."""
    out = []
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        heading, _, body = part.partition("\n")
        blocks = sh_blocks(body)
        if blocks:
            out.append((heading.strip(), "\n".join(blocks)))
    return out


def test_every_section_removes_what_it_makes():
    """A section runs again, and on its own, only if it leaves no name behind that its own
    create would then meet (409, or an ambiguous name): each ends with its clean-up.
    Kept on purpose: what `--or-show` reuses and what `pocketstack demo` makes (it is
    idempotent)."""
    text = open(os.path.join(ROOT, "README.md")).read()
    for heading, script in sections(text):
        lines = [line.split("#")[0].strip()
                 for line in script.replace("\\\n", " ").splitlines()]
        commands = [c.split("||")[0].strip() for line in lines for c in line.split(";")]
        removals = [c for c in commands if " delete" in c or "--status deleted" in c]
        made_in = {}  # what a create made -> what it was made in (a pool's listener, ...)
        for command in commands:
            if not re.match(r"openstack (\S+ )+create ", command) or "--or-show" in command \
                    or " transfer request " in command or "floating ip" in command:
                continue
            named = re.search(r"--name (\S+)", command)
            inside = re.search(r"--(?:listener|loadbalancer|pool) (\S+)", command)
            last = command.split()[-1]
            if not named and last in made_in:
                continue  # an unnamed child (a member, a health monitor) of what it names
            made_in[named.group(1) if named else last] = inside.group(1) if inside else last

        def direct(name, cascade=False):
            # the name itself, or a DNS name it begins (a recordset `www` is www.zone.)
            return any((not cascade or "--cascade" in r) and
                       re.search(rf"(^|\s){re.escape(name)}(\.\S*)?(\s|$)", r)
                       for r in removals)

        def gone(name):
            """Removed itself, or with something it was made in by a --cascade delete."""
            if direct(name):
                return True
            for _ in range(len(made_in)):
                name, parent = made_in.get(name), name
                if name is None or name == parent:
                    return False
                if direct(name, cascade=True):
                    return True
            return False

        for made in made_in:
            assert gone(made), f"{heading}: {made} is never removed"


def test_readme_commands_run_as_written(tmp_path):
    """Every section in the README's order, as pasted, then the sections a user most often
    pastes again a second time on the same cloud: what a section makes it removes, so
    pasting it again works too."""
    clone, home = tmp_path / "pocketstack", tmp_path / "home"
    home.mkdir()
    _fresh_copy(str(clone))
    text = open(clone / "README.md").read()
    runnable, skipped = [], []
    for heading, block in sections(text):
        reason = _machine_has(NEEDS[heading]) if heading in NEEDS else None
        (skipped if reason else runnable).append((heading, reason or block))
    # The second pass repeats the sections a user most often pastes twice (a key pair to a
    # file, a network and a server of a fixed name); that the others remove what they make
    # is checked line by line above, since a whole second pass took over 23 min at load 12.
    again = [f"echo '== again: {h}'\n{b}" for h, b in runnable if h in AGAIN]
    script = "set -e -o pipefail\nset -x\n" + "\n".join(
        [f"echo '== {h}'\n{b}" for h, b in runnable] + again)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OS_", "POCKETSTACK_", "VIRTUAL_ENV", "XDG_DATA_HOME"))}
    env.update(HOME=str(home), POCKETSTACK_PORT=str(_free_port()),
               PIP_CACHE_DIR=env.get("PIP_CACHE_DIR", os.path.expanduser("~/.cache/pip")))
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if not p.startswith(os.path.dirname(sys.executable)))
    log = tmp_path / "readme.log"  # read as it goes: how far a slow run got
    try:
        with open(log, "w") as sink:
            proc = subprocess.run(["bash", "-c", script], cwd=clone, env=env,
                                  stdout=sink, stderr=subprocess.STDOUT, timeout=1380)
    finally:
        subprocess.run([str(clone / ".venv" / "bin" / "pocketstack"), "down"], env=env,
                       capture_output=True, timeout=120)
    out = log.read_text()
    assert proc.returncode == 0, out[-8000:]
    for heading, reason in skipped:
        print(f"README section not run here: {heading} ({reason})")
    assert "pocketstack is up at http://127.0.0.1:" in out
    assert "Next: source .venv/bin/activate" in out
    # make up prints the line to paste for the data dir it used
    assert f"export OS_CLIENT_CONFIG_FILE={home}/.local/share/pocketstack/clouds.yaml " \
           "OS_CLOUD=pocketstack" in out
    assert "created  server instance_hrp2" in out
    assert len(re.findall(r"\| vm1 +\| ACTIVE +\| mynet=10\.1\.0\.\d+", out)) == 2, out[-6000:]
    assert "name='default'" in out  # server show names its security group
    assert "define and start the guest" in out and "(gap)" in out  # pocketstack trace
    # echo's own line (set -x also prints the command, as "+ echo ..."), once per pass
    assert len(re.findall(r"^vm2 did not boot, as asked$", out, re.M)) == 2
    assert "disk on fire" in out
    assert "pocketstack at http://127.0.0.1:" in out and "is ready." in out  # wait
    assert re.search(r"pocketstack \(pid \d+\) stopped\.", out)
    assert "volume c2: AVAILABLE after" in out  # the backup restored
    if "Real virtual machines" in dict(runnable):
        # the console as `console log show` found it right after the boot: the guest's own
        # lines (its user data may run a moment later)
        assert "pocketstack-tiny:" in out
    assert "Traceback" not in out
