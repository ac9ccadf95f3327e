#!/bin/sh
# Where a boot with one network spends its time (issue 13): a fresh `pocketstack up
# --detach`, one network with IPv4 + IPv6 subnets, a warm-up boot, then BOOTS boots
# traced with `pocketstack trace`; the cloud and its data dir are removed at the end.
#   sh bench/trace_boot.sh [BOOTS]      (run from the repository, venv in .venv)
set -eu
BOOTS=${1:-3}
BIN=$(dirname "$0")/../.venv/bin
DIR=$(mktemp -d /tmp/bench-trace-XXXXXX)
PORT=$("$BIN/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export POCKETSTACK_HOME="$DIR" OS_CLIENT_CONFIG_FILE="$DIR/clouds.yaml" OS_CLOUD=pocketstack
trap '"$BIN/pocketstack" down >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
"$BIN/pocketstack" up --detach --port "$PORT" --admin-password bench-admin --timeout 60 >/dev/null
uptime
"$BIN/python" - "$BOOTS" <<'PY'
import sys, openstack
c = openstack.connect(cloud="pocketstack")
net = c.network.create_network(name="trace-net")
c.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.13.0.0/24")
c.network.create_subnet(network_id=net.id, ip_version=6, cidr="fd13::/64",
                        ipv6_address_mode="slaac", ipv6_ra_mode="slaac")
img = c.image.create_image(name="trace-img", data=b"\0" * 4096, disk_format="raw",
                           container_format="bare")
flavor = min(c.compute.flavors(), key=lambda f: f.ram)
for i in range(int(sys.argv[1]) + 1):
    s = c.compute.create_server(name=f"trace-{i}", image_id=img.id, flavor_id=flavor.id,
                                networks=[{"uuid": net.id}])
    c.compute.wait_for_server(s, interval=0.05, wait=60)
PY
i=1
while [ "$i" -le "$BOOTS" ]; do
  "$BIN/pocketstack" trace "trace-$i" --width 100
  i=$((i + 1))
done
uptime
