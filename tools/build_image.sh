#!/bin/sh
# Build the Dockerfile's image without a Docker engine or a container registry: buildah
# (vfs storage, chroot isolation) on a Debian bookworm base made here by mmdebstrap from
# the Debian mirror, in place of the Dockerfile's `FROM python:3.12-slim` (a registry
# image): the image has Debian's Python 3.11 (pocketstack needs >= 3.11).
#
#   tools/build_image.sh [--root DIR] [--check] [TAG]     (as root; TAG: pocketstack:local)
#
# --root DIR  buildah's storage in DIR (default: buildah's own, /var/lib/containers);
#             the base image is made once per storage and reused.
# --check     in the built image: start the cloud and make a volume from a qcow2 image
#             (tools/image_smoke.py), which needs the image's qemu-img.
# Needs: buildah, mmdebstrap (apt-get install buildah mmdebstrap). MIRROR overrides the
# Debian mirror (default http://deb.debian.org/debian).
set -eu

root="" check="" tag="localhost/pocketstack:local"
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root="$2"; shift 2 ;;
    --check) check=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) tag="$1"; shift ;;
  esac
done
for tool in buildah mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "$tool is missing (apt-get install $tool)" >&2; exit 1; }
done
here=$(cd "$(dirname "$0")/.." && pwd)
mirror=${MIRROR:-http://deb.debian.org/debian}
base=localhost/pocketstack-debian-base:bookworm
bh() {
  if [ -n "$root" ]; then
    buildah --storage-driver vfs --root "$root/storage" --runroot "$root/run" "$@"
  else
    buildah --storage-driver vfs "$@"
  fi
}
step() { echo "== $* ($(date +%T))"; }

if ! bh inspect --type image "$base" >/dev/null 2>&1; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  step "base: Debian bookworm with Python from $mirror (mmdebstrap)"
  mmdebstrap --quiet --variant=minbase --include=python3,python3-pip,ca-certificates \
    bookworm "$work/rootfs.tar" "$mirror"
  step "base: imported as $base"
  ctr=$(bh from scratch)
  bh add "$ctr" "$work/rootfs.tar" / >/dev/null
  # This machine's CA bundle: where HTTPS goes through a proxy with its own CA, pip in
  # the build needs it (it is the machine's trust, as the build's network is its own).
  bh copy "$ctr" /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
  # Debian's Python is "externally managed" (PEP 668): the image's one pip install goes
  # into it, as the python image's does.
  bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env PIP_BREAK_SYSTEM_PACKAGES=1 --env PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
    --cmd /bin/sh "$ctr"
  bh commit --quiet --rm "$ctr" "$base" >/dev/null
  rm -rf "$work"
fi

step "image $tag from $here/Dockerfile (buildah, FROM $base)"
# The previous build of the tag goes first: re-tagging would leave it dangling (~0.5 GB).
bh rmi --force "$tag" >/dev/null 2>&1 || true
bh build --quiet --from "$base" --network host --isolation chroot -t "$tag" \
  -f "$here/Dockerfile" "$here" >/dev/null

if [ -n "$check" ]; then
  step "check: the cloud starts in $tag and makes a volume from a qcow2 image"
  ctr=$(bh from "$tag")
  status=0
  bh copy "$ctr" "$here/tools/image_smoke.py" /tmp/image_smoke.py
  bh run --isolation chroot --user pocketstack "$ctr" -- python3 /tmp/image_smoke.py \
    || status=$?
  bh rm "$ctr" >/dev/null
  [ "$status" -eq 0 ] || exit "$status"
fi
step "built $tag"
