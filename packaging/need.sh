#!/usr/bin/env bash
# packaging/need.sh COMMAND:PACKAGE ...: installs, quietly, the Debian packages whose command is missing (the make
# targets of packaging/ assume only Node and npm, as the rest of the Makefile does). As root with apt-get only;
# elsewhere it names what to install and fails.
set -euo pipefail
missing=()
for pair in "$@"; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "packaging needs: ${missing[*]} (apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "installing ${missing[*]} (apt-get)" >&2
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
