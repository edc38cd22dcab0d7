#!/usr/bin/env bash
# `make deb`: .out/dist/svc-ingest_<version>_amd64.deb with dpkg-deb, from the tree of packaging/stage.sh.
# Maintainer scripts as debhelper would write them for a sysusers file and units (dh_installsysusers,
# dh_installsystemd), less the enabling and starting: the timer is the administrator's to enable.
# Usage: packaging/deb.sh EXECUTABLE VERSION OUTDIR
set -euo pipefail
exe=$1 version=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
case $(uname -m) in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
case $exe in *-linux-arm64) arch=arm64 ;; *-linux-x64) arch=amd64 ;; esac
root=$out/deb-$arch
"$here/stage.sh" "$exe" "$root"
install -d -m 0755 "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: svc-ingest
Version: $version
Architecture: $arch
Maintainer: svc-ingest maintainers <svc-ingest@example.com>
Installed-Size: $size
Depends: libc6 (>= 2.28), libgcc-s1 (>= 3.4), libstdc++6 (>= 6)
Recommends: systemd
Section: utils
Priority: optional
Description: stream card-transaction exports into a card-linked-offer service
 svc-ingest reads card-processor exports (CSV or NDJSON, gzipped or piped),
 maps each record through a declarative profile, validates and masks it, and
 sends it in acknowledged batches, recording every outcome in an append-only
 ledger (a file, or a shared PostgreSQL database): a rerun never sends twice.
 .
 One executable (Node.js embedded: nothing else to install), a nightly systemd
 timer and service running as the svc-ingest system user, and the default
 configuration in /etc/svc-ingest/config.json.
CONTROL
echo /etc/svc-ingest/config.json > "$root/DEBIAN/conffiles"
shared=$(cat "$here/maintainer.sh")
cat > "$root/DEBIAN/postinst" <<SCRIPT
#!/bin/sh
set -e
$shared

SCRIPT
cat >> "$root/DEBIAN/postinst" <<'SCRIPT'
# The service user (/usr/lib/sysusers.d/svc-ingest.conf); DPKG_ROOT: an install into another root.
if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
	if command -v systemd-sysusers >/dev/null 2>&1; then
		systemd-sysusers ${DPKG_ROOT:+--root="$DPKG_ROOT"} svc-ingest.conf
	fi
fi
if [ "$1" = configure ]; then
	svc_ingest_folder
	svc_ingest_dropin install
fi
# The units are new or changed; the timer is not enabled nor started (systemctl enable --now svc-ingest.timer).
if [ "$1" = configure ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
exit 0
SCRIPT
cat > "$root/DEBIAN/prerm" <<'SCRIPT'
#!/bin/sh
set -e
# Removed: the timer must not start an executable that is gone, nor a run go on without it.
if [ "$1" = remove ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	deb-systemd-invoke stop svc-ingest.timer svc-ingest.service >/dev/null || true
fi
exit 0
SCRIPT
cat > "$root/DEBIAN/postrm" <<SCRIPT
#!/bin/sh
set -e
$shared

SCRIPT
cat >> "$root/DEBIAN/postrm" <<'SCRIPT'
if [ "$1" = remove ] || [ "$1" = purge ]; then
	svc_ingest_dropin remove
fi
# Purge: the token, the env file, the metrics files (docs/install.md, "What the packages do to the machine").
if [ "$1" = purge ]; then
	svc_ingest_purge
fi
if [ "$1" = remove ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
# The user and its state (/var/lib/svc-ingest: the ledger) are kept, as Debian keeps system users' data.
exit 0
SCRIPT
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
deb=$out/svc-ingest_${version}_${arch}.deb
# xz -1: 34 MB in 16 s (xz -6: 30 MB in 96 s; gzip: 43 MB); every dpkg reads it.
dpkg-deb --root-owner-group -Zxz -z1 --build "$root" "$deb" >/dev/null
echo "$deb"
