#!/usr/bin/env bash
# Sets up the machine, builds Vitrine and plays the demo schedule (Schedules/demo.toml).
#
# With a screen (a DRM card with a connected connector) it plays full screen on KMS until Ctrl-C
# (or for DEMO_SECONDS). Without one it plays on the headless EGL display for one pass of the
# playlist and writes screenshots at the overlay cues into out/demo/ (PNG files to look at), with
# the presentation log beside them. Without a sound card it plays silently (--no-audio).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
bash scripts/fixtures.sh

# The shipping build (Swift's runtime linked in), the binary the image and the benchmarks use.
vitrine=$(bash scripts/release-build.sh)
schedule=Schedules/demo.toml
out=out/demo
rm -rf "$out" && mkdir -p "$out"

"$vitrine" validate "$schedule"

# A sound card? (alsa-lib lists cards in /proc/asound/cards; "--- no soundcards ---" when none.)
audio=(--no-audio)
if [ -r /proc/asound/cards ] && grep -q '^ *[0-9]' /proc/asound/cards; then
    audio=()
fi

# A screen? A DRM connector whose status is "connected".
screen=""
for status in /sys/class/drm/card*-*/status; do
    [ -r "$status" ] && [ "$(cat "$status")" = connected ] && screen=${status%/status} && break
done

if [ -n "$screen" ]; then
    echo "demo: playing $schedule on KMS (${screen##*/}); Ctrl-C stops"
    duration=()
    [ -n "${DEMO_SECONDS:-}" ] && duration=(--duration "$DEMO_SECONDS")
    exec "$vitrine" play "$schedule" --display kms "${audio[@]}" "${duration[@]}" \
        --presentation-log "$out/presentation.jsonl"
fi

# Headless: one 19 s pass of the playlist from its start. The fallback playlist loops from
# 1970-01-01T00:00Z, so --start-at that instant begins a pass; the screenshot times are in each
# item's own timeline: one frame (40 ms at 25 fps) before and at the logo's cue (2 s, fading in
# over 0.5 s), before and at the ticker's cue (25 % of 10 s = 2.5 s), and with both on screen.
echo "demo: no screen found; playing $schedule headless for 19 s"
"$vitrine" play "$schedule" --display headless --mode 1280x720@30 "${audio[@]}" \
    --start-at 1970-01-01T00:00:00Z --duration 19 \
    --presentation-log "$out/presentation.jsonl" \
    --screenshot-at 1.96="$out/1-before-logo.png" \
    --screenshot-at 2.0="$out/2-logo-cue.png" \
    --screenshot-at 2.48="$out/3-before-ticker.png" \
    --screenshot-at 2.52="$out/4-ticker-cue.png" \
    --screenshot-at 5.0="$out/5-logo-and-ticker.png"
echo
echo "demo: screenshots and the presentation log are in $out/:"
ls -1 "$out"
echo "overlay events (from $out/presentation.jsonl):"
grep -E '"event":"overlay-(shown|hidden)"' "$out/presentation.jsonl" | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print("  %-14s item %d at %.3f s: %s" % (r["event"], r["item"], r["time_s"], r.get("detail", "")))'
