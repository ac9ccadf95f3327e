#!/usr/bin/env bash
# Ceph for a lab or the tests: Debian's Ceph 16 daemons and tools, QEMU's rbd
# block driver, userspace iSCSI (tgt, with its rbd backing store), and Debian's rados/rbd
# Python bindings linked into the venv given as $1 (they exist only as Debian packages,
# built for Debian's python3; the modules load in any CPython 3.11). Idempotent; root or
# sudo. `make ceph` then starts the data dir's one-node cluster.
set -euo pipefail
VENV=${1:-.venv}
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

PACKAGES=(ceph-mon ceph-mgr ceph-osd ceph-common radosgw python3-rados python3-rbd
          qemu-block-extra tgt tgt-rbd uuid-runtime)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${#missing[@]} Debian packages for Ceph (a few minutes the first time): ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
    "${missing[@]}"
fi

site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
for mod in rados rbd; do
  so=$(ls /usr/lib/python3/dist-packages/$mod.cpython-*.so)
  ln -sf "$so" "$site/$(basename "$so")"
done
"$VENV/bin/python" -c "import rados, rbd" && echo "rados and rbd bindings: linked into $site"
