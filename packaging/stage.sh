#!/usr/bin/env bash
# The file tree the .deb and the .rpm both install (packaging/deb.sh, packaging/rpm.sh):
#   /usr/bin/svc-ingest                                   the single executable (make dist)
#   /usr/lib/systemd/system/svc-ingest.{service,timer}    deploy/systemd/, the executable's path put in ExecStart
#   /usr/lib/systemd/system/svc-ingest.service.d/package.conf   SVC_CONFIG=/etc/svc-ingest/config.json
#   /usr/lib/sysusers.d/svc-ingest.conf                   the service user (systemd-sysusers)
#   /usr/share/svc-ingest/svc-ingest-before-247.conf      the drop-in the install adds on systemd < 247
#   /etc/svc-ingest/config.json                           the default configuration, a conffile to edit
#                                                         (the install makes the folder 0750 root:svc-ingest)
#   /usr/share/doc/svc-ingest/                            README, the docs, the copyright
# Usage: packaging/stage.sh EXECUTABLE ROOT
set -euo pipefail
exe=$1 root=$2
repo=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$root"
install -D -m 0755 "$exe" "$root/usr/bin/svc-ingest"
units=$root/usr/lib/systemd/system
install -d -m 0755 "$units/svc-ingest.service.d" "$root/usr/lib/sysusers.d" "$root/usr/share/svc-ingest" "$root/etc/svc-ingest"
# The unit as deploy/ has it (written for an npm install under /opt), with the packaged executable's path and a
# header that says what the package did and what is left to do.
{
  cat <<'HEAD'
# svc-ingest: the nightly send of one feed, started by svc-ingest.timer; installed by the svc-ingest package
# (/usr/share/doc/svc-ingest/docs/install.md.gz, "Service units"). The package made the user svc-ingest, the folder
# /etc/svc-ingest (0750 root:svc-ingest) and /etc/svc-ingest/env (0640, one comment line): put the settings there
# (SVC_BASE_URL=… at least) and the token in /etc/svc-ingest/token (0600), give the svc-ingest group write access
# to node_exporter's textfile folder, then systemctl enable --now svc-ingest.timer. On systemd older than 247 the
# package added /etc/systemd/system/svc-ingest.service.d/before-247.conf. Change the export, mapping or metrics
# with systemctl edit svc-ingest.service (an empty ExecStart=, then the new one: an upgrade replaces this file);
# another feed: a copy of it in /etc/systemd/system/svc-ingest-FEED.service with its own export, mapping, state
# and metrics label.
HEAD
  sed -n '/^\[Unit\]/,$p' "$repo/deploy/systemd/svc-ingest.service" | sed 's#/opt/svc-ingest/bin/svc-ingest#/usr/bin/svc-ingest#g'
} > "$units/svc-ingest.service"
install -m 0644 "$repo/deploy/systemd/svc-ingest-before-247.conf" "$root/usr/share/svc-ingest/svc-ingest-before-247.conf"
install -m 0644 "$repo/deploy/systemd/svc-ingest.timer" "$units/svc-ingest.timer"
chmod 0644 "$units/svc-ingest.service"
cat > "$units/svc-ingest.service.d/package.conf" <<'CONF'
# Installed by the svc-ingest package: the configuration file the package ships (a conffile: edit it there).
[Service]
Environment=SVC_CONFIG=/etc/svc-ingest/config.json
CONF
chmod 0644 "$units/svc-ingest.service.d/package.conf"
install -m 0644 "$repo/deploy/systemd/svc-ingest.sysusers.conf" "$root/usr/lib/sysusers.d/svc-ingest.conf"
install -m 0644 "$repo/config/default.json" "$root/etc/svc-ingest/config.json"
doc=$root/usr/share/doc/svc-ingest
install -d -m 0755 "$doc/docs"
install -m 0644 "$repo/README.md" "$doc/README.md"
install -m 0644 "$repo"/docs/*.md "$doc/docs/"
# Debian policy 12.3: documentation over 4 KiB compressed with gzip -9n.
find "$doc" -type f -name '*.md' -size +4k -exec gzip -9n {} +
# A native package's changelog (Debian policy 12.7), one entry: this version, from this commit.
commit=$("$exe" --version | sed 's/.*(\(.*\))/\1/')
printf 'svc-ingest (%s) unstable; urgency=medium\n\n  * Release %s, built from commit %s.\n\n -- svc-ingest maintainers <svc-ingest@example.com>  %s\n' \
  "$("$exe" --version | cut -d' ' -f1)" "$("$exe" --version | cut -d' ' -f1)" "$commit" \
  "$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}")" |
  gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
# The manual page: the command list and global options as `--help` prints them (each command: svc-ingest help CMD).
man=$root/usr/share/man/man1
install -d -m 0755 "$man"
{
  printf '.TH SVC-INGEST 1 "" "svc-ingest %s" "User Commands"\n' "$("$exe" --version | cut -d' ' -f1)"
  printf '.SH NAME\nsvc-ingest \\- stream card-transaction exports into a card-linked-offer service\n'
  printf '.SH SYNOPSIS\n.B svc-ingest\n[\\fIoptions\\fR] \\fIcommand\\fR [\\fIargs\\fR]\n.SH DESCRIPTION\n.nf\n'
  "$exe" --help | sed 's/\\/\\e/g; s/^\./\\\&./; s/^'"'"'/\\\&'"'"'/'
  printf '.fi\n.SH SEE ALSO\n\\fBsvc-ingest help\\fR \\fIcommand\\fR; /usr/share/doc/svc-ingest/\n'
} | gzip -9n > "$man/svc-ingest.1.gz"
chmod 0644 "$man/svc-ingest.1.gz"
# What lintian says and why it stays (docs/install.md, "lintian").
install -d -m 0755 "$root/usr/share/lintian/overrides"
cat > "$root/usr/share/lintian/overrides/svc-ingest" <<'LINTIAN'
# Node.js carries its own zlib inside the one executable: that is what makes it need no Node installed.
svc-ingest: embedded-library zlib [usr/bin/svc-ingest]
# Node.js's official Linux build, which the executable is, is linked without PIE.
svc-ingest: hardening-no-pie [usr/bin/svc-ingest]
LINTIAN
chmod 0644 "$root/usr/share/lintian/overrides/svc-ingest"
cat > "$doc/copyright" <<'COPY'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: svc-ingest
Source: the svc-ingest repository

Files: *
Copyright: 2026 the svc-ingest authors
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated
 documentation files (the "Software"), to deal in the Software without restriction, including without limitation
 the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and
 to permit persons to whom the Software is furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies or substantial portions of
 the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO
 THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT,
 TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 SOFTWARE.
 .
 The executable embeds Node.js (MIT and the licences its LICENSE file lists) and the npm packages the CLI uses
 (their licences: docs/dependencies.md).
COPY
chmod 0644 "$doc/copyright"
