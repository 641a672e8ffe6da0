#!/bin/sh
# Install the Debian packages swaptrace needs to build, run and test.
set -e
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
PACKAGES="build-essential cmake pkg-config
  libtraceevent-dev libtracefs-dev libtracecmd-dev libsqlite3-dev libzstd-dev
  libcairo2-dev libpango1.0-dev fonts-dejavu-core
  sqlite3 trace-cmd blktrace xz-utils zstd python3 util-linux kmod time e2fsprogs"
missing=$(for p in $PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
