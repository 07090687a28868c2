#!/usr/bin/env bash
# Memory over a long queue: peak RSS of `vitrine play` over 1,000 short clips against 10 of the
# same clips. Only the current and the next item hold an open input and decoders, so the peak
# should not grow with the queue (target: ratio <= 1.2).
source "$(dirname "$0")/common.sh"
build_vitrine
clip=$work/short.mp4
[ -s "$clip" ] || ff -f lavfi -i "testsrc2=size=320x240:rate=25:duration=0.2" -c:v libx264 -preset veryfast -pix_fmt yuv420p "$clip"
args10=(); for _ in $(seq 10); do args10+=("$clip"); done
args1000=(); for _ in $(seq 1000); do args1000+=("$clip"); done
# On the simulated clock by default (the same engine work, as fast as decoding allows);
# REALTIME=1 plays in real time (1,000 clips of 0.2 s take about 200 s).
pace=(--simulated-clock); [ -n "${REALTIME:-}" ] && pace=()
measure "$work/q10.time" "$vitrine" play --no-audio --display headless "${pace[@]}" "${args10[@]}"
measure "$work/q1000.time" "$vitrine" play --no-audio --display headless "${pace[@]}" "${args1000[@]}"
read -r _ _ _ rss10 < "$work/q10.time"
read -r wall1000 _ _ rss1000 < "$work/q1000.time"
echo "queue of short clips (0.2 s each)"
echo "  10 items   : maxrss ${rss10}kB"
echo "  1000 items : maxrss ${rss1000}kB (wall ${wall1000}s)"
echo "  rss ratio (1000 / 10, target <= 1.2): $(ratio "$rss1000" "$rss10")"
result "peak RSS, queue of 1000 clips vs 10" "${rss1000} kB" "10 clips ${rss10} kB" "$(ratio "$rss1000" "$rss10")" "<= 1.2"
