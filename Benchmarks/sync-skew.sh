#!/usr/bin/env bash
# Inter-screen skew: three `vitrine play` processes on headless displays (25 Hz), started 0, 1.3 and
# 2.9 s apart, play the same schedule on their wall clocks for DURATION seconds (default 300). For
# every frame two screens both showed, how far apart on the wall clock (presented_utc_ns) they showed
# it: p50, p99 and max, in milliseconds and in refresh intervals. The reference is the physical floor
# without genlock: one refresh interval (refreshes of separate screens are not phase-locked), the
# target p99 <= 1 refresh. No other player keeps separate processes in step without a coordinator,
# so the ratio is against that floor.
#
#   bash Benchmarks/sync-skew.sh [DURATION]
source "$(dirname "$0")/common.sh"
duration=${1:-${DURATION:-300}}
build_vitrine
bash "$root/scripts/fixtures.sh" >&2
schedule=$work/sync-wall.toml
cat > "$schedule" <<EOF
version = 1
timezone = "UTC"
fallback = "wall"

[[playlists.wall.items]]
video = "$root/Fixtures/generated/sync.mp4"
EOF
pids=()
previous=0
for spec in 0:0 1:1.3 2:2.9; do
    index=${spec%%:*}; delay=${spec##*:}
    sleep "$(python3 -c "print($delay - $previous)")"
    previous=$delay
    "$vitrine" play "$schedule" --display headless --mode 320x240@25 --no-audio \
        --duration "$(python3 -c "print($duration + 4 - $delay)")" --presentation-log "$work/sync-screen$index.jsonl" \
        2> "$work/sync-screen$index.err" &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || { echo "sync-skew: a player failed; see $work/sync-screen*.err" >&2; exit 1; }; done
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
screens = []
for index in range(3):
    frames = []
    with open(f"{work}/sync-screen{index}.jsonl") as log:
        for line in log:
            record = json.loads(line)
            if record.get("type") == "frame" and "presented_utc_ns" in record:
                frames.append((record["pts_s"], record["presented_utc_ns"]))
    screens.append(frames)
# From a second after the last screen started to a second before the first one stopped: a frame
# one screen showed after another had stopped has no partner (its nearest match would be a pass of
# the loop earlier).
start = max(frames[0][1] for frames in screens) + 1_000_000_000
end = min(frames[-1][1] for frames in screens) - 1_000_000_000
skews = []
for a, b in ((0, 1), (0, 2), (1, 2)):
    shown = {}
    for pts, utc in screens[a]:
        shown.setdefault(pts, []).append(utc)
    for pts, utc in screens[b]:
        if start <= utc <= end and pts in shown:
            skews.append(min(abs(other - utc) for other in shown[pts]) / 1e6)
skews.sort()
refresh = 40.0
p50, p99, worst = skews[len(skews) // 2], skews[len(skews) * 99 // 100], skews[-1]
print(f"inter-screen skew, three headless players at 25 Hz, {len(skews)} frame pairs")
print(f"  p50 {p50:.2f} ms ({p50 / refresh:.3f} refresh), p99 {p99:.2f} ms ({p99 / refresh:.3f} refresh), max {worst:.2f} ms ({worst / refresh:.3f} refresh)")
ratio = p99 / refresh
print(f"RESULT\tinter-screen skew p99 (p50 {p50:.1f} ms, max {worst:.1f} ms)\t{p99:.1f} ms\t1 refresh {refresh:.0f} ms\t{ratio:.3f}\t<= 1.0\t{'pass' if ratio <= 1.0 else 'FAIL'}")
PY
