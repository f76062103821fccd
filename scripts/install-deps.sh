#!/bin/sh
# Installs every Debian package dt's build, tests, benchmarks and demo need.
# Idempotent: does nothing (and needs no network) when everything is present.
set -eu

PKGS="build-essential clang lld llvm libclang-rt-14-dev pkg-config
libzstd-dev zstd libsqlite3-dev sqlite3 libedit-dev libelf-dev libdw-dev liblzma-dev libbz2-dev libxxhash-dev zlib1g-dev
qemu-system-x86 busybox-static cpio gzip kmod
linux-image-cloud-amd64 linux-headers-cloud-amd64 sparse mandoc
tmux chromium python3 xz-utils python3-zstandard python3-xxhash linux-perf
libc6-dbg systemtap-sdt-dev libcapstone-dev libiberty-dev strace nodejs
libdevel-nytprof-perl libxml2-utils
openjdk-17-jdk-headless time"
# `make check-debug` only: Debian's kernel source and what building it takes
if [ "${1:-}" = debug ]; then
	PKGS="$PKGS linux-source-6.1 bison flex bc libssl-dev"
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null
