# Shell functions the .deb's maintainer scripts and the .rpm's scriptlets share (packaging/deb.sh and rpm.sh put
# this text into each script; docs/install.md, "What the packages do to the machine"). POSIX sh; DPKG_ROOT: an install
# into another root (dpkg --root), empty otherwise (and always for rpm).

# The drop-in for systemd older than 247 (docs/install.md, "systemd versions"): `install` adds it where the running
# systemd is older, and removes it where it is not (a host upgraded since); `remove` removes it.
svc_ingest_dropin() {
	dropins=${DPKG_ROOT:-}/etc/systemd/system/svc-ingest.service.d
	systemd=$(systemctl --version 2>/dev/null | sed -n '1s/^systemd \([0-9][0-9]*\).*/\1/p')
	if [ "$1" = install ] && [ -n "$systemd" ] && [ "$systemd" -lt 247 ]; then
		mkdir -p "$dropins"
		cp "${DPKG_ROOT:-}/usr/share/svc-ingest/svc-ingest-before-247.conf" "$dropins/before-247.conf"
		chmod 0644 "$dropins/before-247.conf"
	else
		rm -f "$dropins/before-247.conf"
		rmdir "$dropins" 2>/dev/null || true
	fi
}

# /etc/svc-ingest 0750 root:svc-ingest (the service user reads config.json; nobody else lists the folder), and the
# env file the docs have the administrator fill, made empty 0640 root:svc-ingest where there is none. The group by
# its number from the root's /etc/group (systemd-sysusers wrote it there; the name may not resolve outside it).
svc_ingest_folder() {
	etc=${DPKG_ROOT:-}/etc/svc-ingest
	gid=$(sed -n 's/^svc-ingest:[^:]*:\([0-9][0-9]*\):.*/\1/p' "${DPKG_ROOT:-}/etc/group" 2>/dev/null) || gid=
	[ -n "$gid" ] || return 0
	chown "0:$gid" "$etc"
	chmod 0750 "$etc"
	if [ ! -e "$etc/env" ]; then
		printf '%s\n' '# svc-ingest.service settings, one VARIABLE=value a line (docs/configuration.md), e.g. SVC_BASE_URL=https://svc.example.com' > "$etc/env"
		chown "0:$gid" "$etc/env"
		chmod 0640 "$etc/env"
	fi
}

# What the package and the service made, on purge (dpkg) or removal (rpm; docs/install.md says why): the token and
# the env file in /etc/svc-ingest, the folder when nothing else is left in it, and the metrics files the service
# wrote for node_exporter (a removed feed's last figures would otherwise be scraped for ever). The ledger and the
# rejects (/var/lib/svc-ingest) and the user stay.
svc_ingest_purge() {
	rm -f "${DPKG_ROOT:-}/etc/svc-ingest/token" "${DPKG_ROOT:-}/etc/svc-ingest/env"
	rmdir "${DPKG_ROOT:-}/etc/svc-ingest" 2>/dev/null || true
	rm -f "${DPKG_ROOT:-}"/var/lib/prometheus/node-exporter/svc_ingest_*.prom
}
