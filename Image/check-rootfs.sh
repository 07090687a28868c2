#!/usr/bin/env bash
# Checks the appliance's configuration files (Image/rootfs/) with systemd's own tools, on the build
# host, without building or booting the image:
#   - tmpfiles.d/vitrine-journal.conf: `systemd-tmpfiles --clean` on a scratch root removes the
#     journal folder of an earlier boot last written 40 days ago, keeps one written 10 days ago,
#     and keeps the current boot's folder however old its files are.
# Exit 77 with a SKIPPED line where systemd-tmpfiles is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v systemd-tmpfiles >/dev/null; then
    echo "check-rootfs: SKIPPED: systemd-tmpfiles is not installed"
    exit 77
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
old=0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a recent=0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b current=0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c
journal=$scratch/var/log/journal
mkdir -p "$scratch/etc/tmpfiles.d" "$journal/$old" "$journal/$recent" "$journal/$current"
cp Image/rootfs/etc/tmpfiles.d/vitrine-journal.conf "$scratch/etc/tmpfiles.d/"
echo "$current" > "$scratch/etc/machine-id"
for id in "$old" "$recent" "$current"; do
    echo entries > "$journal/$id/system.journal"
    echo entries > "$journal/$id/system@0000000000000001-0000000000000001.journal"
done
touch -d "40 days ago" "$journal/$old"/* "$journal/$old" "$journal/$current"/* "$journal/$current"
touch -d "10 days ago" "$journal/$recent"/* "$journal/$recent"
# An inspector reading the old journal today sets its atime to now, which must not keep it.
touch -a "$journal/$old"/*
systemd-tmpfiles --clean --root="$scratch" "$scratch/etc/tmpfiles.d/vitrine-journal.conf"
failed=0
[ ! -e "$journal/$old" ] || { echo "check-rootfs: the journal folder of a boot 40 days ago was kept" >&2; failed=1; }
[ -e "$journal/$recent/system.journal" ] || { echo "check-rootfs: the journal of a boot 10 days ago was removed" >&2; failed=1; }
[ -e "$journal/$current/system.journal" ] && [ -e "$journal/$current/system@0000000000000001-0000000000000001.journal" ] \
    || { echo "check-rootfs: the current boot's journal was removed" >&2; failed=1; }
[ "$failed" = 0 ] || exit 1
echo "check-rootfs: journals of earlier boots expire after 30 days, the current boot's never"
