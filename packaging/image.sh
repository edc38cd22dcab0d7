#!/usr/bin/env bash
# `make image`: the container image the Kubernetes CronJob names, as an OCI image layout in .out/dist/image (tags
# <version>-<commit> and <version>) and an archive of it, .out/dist/svc-ingest-<version>-<commit>.oci.tar, which
# `podman load`, `skopeo copy oci-archive:…` or a registry upload take. Built with umoci (Debian's package): no base
# image is pulled. The root filesystem holds only what runs: the executable, the shared libraries it links against
# (from this machine's Debian packages libc6, libstdc++6, libgcc-s1), /etc/passwd and /etc/group naming the user
# it runs as (10001, as the CronJob), and an empty /tmp. No shell, no package manager.
# Usage: packaging/image.sh EXECUTABLE VERSION OUTDIR
set -euo pipefail
exe=$(realpath "$1") version=$2 out=$(realpath "$3")
commit=$("$exe" --version | sed 's/.*(\(.*\))/\1/')
tag=$version-$commit
root=$out/image-root layout=$out/image
rm -rf "$root" "$layout"
install -d -m 0755 "$root/usr/bin" "$root/etc" "$root/var/lib"
install -d -m 1777 "$root/tmp"
install -d -m 0700 -o 10001 -g 10001 "$root/var/lib/svc-ingest"
install -m 0755 "$exe" "$root/usr/bin/svc-ingest"
# Every library the dynamic loader resolves, at the path it resolves it to (the loader itself included).
ldd "$exe" | grep -o '/[^ ]*' | sort -u | while read -r lib; do
  install -D -m 0755 "$(realpath "$lib")" "$root$lib"
done
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nsvc-ingest:x:10001:10001:svc-ingest:/var/lib/svc-ingest:/usr/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nsvc-ingest:x:10001:\n' > "$root/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$root/etc/nsswitch.conf"
chmod 0644 "$root"/etc/*
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
umoci insert --image "$layout:$tag" "$root" /
umoci config --image "$layout:$tag" \
  --config.user 10001:10001 \
  --config.entrypoint /usr/bin/svc-ingest \
  --config.cmd --help \
  --config.workingdir /var/lib/svc-ingest \
  --config.env PATH=/usr/bin \
  --config.env SVC_LOG_FORMAT=json \
  --config.label "org.opencontainers.image.title=svc-ingest" \
  --config.label "org.opencontainers.image.version=$version" \
  --config.label "org.opencontainers.image.revision=$commit" \
  --author "svc-ingest maintainers" \
  --history.created_by "packaging/image.sh"
umoci tag --image "$layout:$tag" "$version"
umoci gc --layout "$layout"
archive=$out/svc-ingest-$tag.oci.tar
tar -C "$layout" -cf "$archive" .
# The CronJob naming this very build (deploy/ names the version's tag, which a release moves).
sed "s#^\( *image: .*/svc-ingest:\).*#\1$tag#" "$(dirname "$0")/../deploy/kubernetes/svc-ingest-cronjob.yaml" \
  > "$out/svc-ingest-cronjob.yaml"
echo "$layout:$tag"
