#!/usr/bin/env bash
# Host setup for real guests: Debian packages for libvirt/QEMU, the tiny guest and
# guest networking (iproute2, dnsmasq-base, nftables: `pocketstack up --compute-driver
# libvirt` refuses to start without them; haproxy for the load balancer's data plane),
# the users libvirt's QEMU driver expects, QEMU
# run as root (containers here have no working user namespaces for libvirt's DAC), and
# virtlogd + libvirtd started if they are not running. Idempotent: safe to call from
# .ci/run and by hand. Needs root (or sudo).
set -euo pipefail

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

PACKAGES=(libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libvirt-dev pkg-config
          qemu-system-x86 qemu-utils busybox-static linux-image-cloud-amd64 cpio kmod
          iproute2 dnsmasq-base nftables haproxy
          cryptsetup-bin)  # LUKS headers of encrypted volumes in 0.2 s (qemu-img takes ~6 s)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing ${#missing[@]} Debian packages for real guests (a few minutes the first time): ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Another install may hold the dpkg lock: wait for it rather than fail.
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
    "${missing[@]}"
fi

getent group kvm >/dev/null || $SUDO groupadd --system kvm
getent group libvirt-qemu >/dev/null || $SUDO groupadd --system libvirt-qemu
getent passwd libvirt-qemu >/dev/null \
  || $SUDO useradd --system -g libvirt-qemu -G kvm -d /var/lib/libvirt -s /usr/sbin/nologin \
       libvirt-qemu

$SUDO mkdir -p /etc/libvirt /var/log/libvirt/qemu /run/libvirt /var/lib/libvirt
conf=/etc/libvirt/qemu.conf
[ -f "$conf" ] || $SUDO touch "$conf"
for key in user group; do
  if grep -qE "^\s*$key\s*=" "$conf"; then
    $SUDO sed -i -E "s/^\s*$key\s*=.*/$key = \"root\"/" "$conf"
  else
    echo "$key = \"root\"" | $SUDO tee -a "$conf" >/dev/null
  fi
done

echo "== starting virtlogd and libvirtd (if they are not running)"
pgrep -x virtlogd >/dev/null || $SUDO virtlogd -d
if ! pgrep -x libvirtd >/dev/null; then
  $SUDO libvirtd -d
fi
for _ in $(seq 1 50); do
  virsh -c qemu:///system version >/dev/null 2>&1 && break
  sleep 0.2
done
virsh -c qemu:///system version
