#!/usr/bin/env bash
# Import throughput: `vitrine import` of a 1 GB signed bundle (8 files of 128 MB plus a schedule and
# a short clip) from a local folder — signature and manifest checks, every file copied once while
# its SHA-256 is computed, the schedule validated, syncfs, the atomic switch — against
# `cp -r` of the same folder, `sha256sum` of the copies and `sync`, in one run. Prints MB/s and the
# ratio vitrine / reference (target >= 0.8). Both start from a warm page cache, like a second read
# of a stick; BUNDLE_MB changes the size.
source "$(dirname "$0")/common.sh"
megabytes=${BUNDLE_MB:-1024}
build_vitrine
command -v minisign > /dev/null || { echo "minisign is missing: apt-get install minisign" >&2; exit 1; }
stick=$work/import-stick
bundle=$stick/vitrine
if [ ! -s "$bundle/MANIFEST.minisig" ] || [ "$(cat "$work/import-size" 2>/dev/null)" != "$megabytes" ]; then
    rm -rf "$stick" "$work/import-keys" && mkdir -p "$bundle/media" "$work/import-keys"
    per=$((megabytes / 8))
    for i in 1 2 3 4 5 6 7 8; do head -c "${per}M" /dev/urandom > "$bundle/media/part$i.bin"; done
    ff -f lavfi -i "testsrc2=size=320x240:rate=25:duration=2" -c:v libx264 -preset veryfast -pix_fmt yuv420p "$bundle/media/clip.mp4"
    printf 'version = 1\nfallback = "loop"\n[[playlists.loop.items]]\nvideo = "media/clip.mp4"\n' > "$bundle/schedule.toml"
    minisign -G -W -p "$work/import-keys/bench.pub" -s "$work/import-keys/bench.key" > /dev/null
    "$vitrine" bundle create "$bundle" > /dev/null
    minisign -S -s "$work/import-keys/bench.key" -m "$bundle/MANIFEST" > /dev/null
    echo "$megabytes" > "$work/import-size"
fi
cat "$bundle"/media/* > /dev/null   # warm the cache for both
total=$(du -sbL "$bundle" | cut -f1)
rm -rf "$work/import-data" "$work/import-copy"
measure "$work/import.time" "$vitrine" import "$stick" --directory "$work/import-data" --keys "$work/import-keys"
measure "$work/cp.time" bash -c "cp -r '$bundle' '$work/import-copy' && find '$work/import-copy' -type f -print0 | xargs -0 sha256sum > /dev/null && sync"
read -r v_wall v_user v_sys v_rss < "$work/import.time"
read -r r_wall r_user r_sys r_rss < "$work/cp.time"
rm -rf "$work/import-data" "$work/import-copy"
v_rate=$(python3 -c "print(round($total / 1e6 / $v_wall, 1))")
r_rate=$(python3 -c "print(round($total / 1e6 / $r_wall, 1))")
echo "import of a $((total / 1000000)) MB bundle from a local folder"
echo "  cp -r + sha256sum + sync: wall ${r_wall}s (${r_rate} MB/s) cpu $(python3 -c "print(round($r_user+$r_sys,2))")s"
echo "  vitrine import          : wall ${v_wall}s (${v_rate} MB/s) cpu $(python3 -c "print(round($v_user+$v_sys,2))")s maxrss ${v_rss}kB"
echo "  throughput ratio (vitrine / reference, target >= 0.8): $(ratio "$v_rate" "$r_rate")"
result "bundle import throughput" "${v_rate} MB/s" "cp+sha256sum+sync ${r_rate} MB/s" "$(ratio "$v_rate" "$r_rate")" ">= 0.8"
