#!/usr/bin/env bash
# `make rpm`: .out/dist/svc-ingest-<version>-1.<arch>.rpm with rpmbuild, from the tree of packaging/stage.sh (the
# same files as the .deb). Scriptlets as Fedora's %sysusers_create_compat and %systemd_post/%systemd_preun/
# %systemd_postun would do, written out (Debian's rpm has no systemd-rpm-macros), less enabling: the timer is the
# administrator's to enable. rpmbuild finds the executable's library needs (Requires: libc.so.6(GLIBC_2.28)…).
# Usage: packaging/rpm.sh EXECUTABLE VERSION OUTDIR
set -euo pipefail
exe=$(realpath "$1") version=$2 out=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
case $exe in *-linux-arm64) arch=aarch64 ;; *) arch=x86_64 ;; esac
top=$out/rpm-$arch
rm -rf "$top"
mkdir -p "$top"/{BUILD,RPMS,SPECS,SRPMS,SOURCES}
stage=$top/stage
"$here/stage.sh" "$exe" "$stage"
rm -rf "$stage/usr/share/lintian"
commit=$("$exe" --version | sed 's/.*(\(.*\))/\1/')
day=$(LC_ALL=C date -u -d "@${SOURCE_DATE_EPOCH:-$(git -C "$here/.." log -1 --format=%ct 2>/dev/null || date +%s)}" '+%a %b %d %Y')
# The shell functions the scriptlets share with the .deb's (rpm's own macros escaped: %% is a literal %).
shared=$(sed 's/%/%%/g' "$here/maintainer.sh")
cat > "$top/SPECS/svc-ingest.spec" <<SPEC
Name:           svc-ingest
Version:        $version
Release:        1
Summary:        Stream card-transaction exports into a card-linked-offer service
License:        MIT
Group:          Applications/System
Packager:       svc-ingest maintainers <svc-ingest@example.com>
BuildArch:      $arch
Recommends:     systemd
# The executable is Node.js with the CLI injected: no debug package, no strip after the fact (that would drop it).
%global debug_package %{nil}
%global __os_install_post %{nil}
%global _build_id_links none

%description
svc-ingest reads card-processor exports (CSV or NDJSON, gzipped or piped),
maps each record through a declarative profile, validates and masks it, and
sends it in acknowledged batches, recording every outcome in an append-only
ledger (a file, or a shared PostgreSQL database): a rerun never sends twice.
One executable (Node.js embedded), a nightly systemd timer and service running
as the svc-ingest system user, and the default configuration in
/etc/svc-ingest/config.json.

%install
cp -a $stage/. %{buildroot}/

%post
$shared
if command -v systemd-sysusers >/dev/null 2>&1; then systemd-sysusers svc-ingest.conf || :; fi
svc_ingest_folder
svc_ingest_dropin install
if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null 2>&1 || :; fi

%preun
if [ \$1 -eq 0 ] && [ -d /run/systemd/system ]; then
  systemctl stop svc-ingest.timer svc-ingest.service >/dev/null 2>&1 || :
fi

%postun
$shared
# Removed (not upgraded): what the package and the service made (docs/install.md, "What the packages do").
if [ \$1 -eq 0 ]; then
  svc_ingest_dropin remove
  svc_ingest_purge
fi
if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null 2>&1 || :; fi

%files
%attr(0755,root,root) /usr/bin/svc-ingest
/usr/lib/systemd/system/svc-ingest.service
/usr/lib/systemd/system/svc-ingest.timer
%dir /usr/lib/systemd/system/svc-ingest.service.d
/usr/lib/systemd/system/svc-ingest.service.d/package.conf
/usr/lib/sysusers.d/svc-ingest.conf
# 0755 root:root as shipped (rpmlint: non-standard-dir-perm otherwise); %post gives it 0750 and the user's group,
# which rpm -V is told not to check.
%dir %attr(0755,root,root) %verify(not mode group) /etc/svc-ingest
/usr/share/svc-ingest
%config(noreplace) /etc/svc-ingest/config.json
%doc /usr/share/doc/svc-ingest
/usr/share/man/man1/svc-ingest.1.gz

%changelog
* $day svc-ingest maintainers <svc-ingest@example.com> - $version-1
- Release $version, built from commit $commit.
SPEC
# Debian's rpm: no rpm database of build dependencies to check (--nodeps); xz level 2, as for the .deb.
rpmbuild -bb --nodeps --quiet --define "_topdir $top" --define '_binary_payload w2.xzdio' \
  --target "$arch" "$top/SPECS/svc-ingest.spec" >/dev/null
rpm=$out/svc-ingest-$version-1.$arch.rpm
mv "$top/RPMS/$arch/svc-ingest-$version-1.$arch.rpm" "$rpm"
echo "$rpm"
