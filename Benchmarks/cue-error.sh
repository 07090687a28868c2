#!/usr/bin/env bash
# Overlay cue error: a schedule whose one 1080p30 H.264/AAC clip carries text overlays at many cues
# (CUES, default 40, spread over the clip at times that fall between frames as well as on them),
# played in real time on the headless display (60 Hz) with the presentation log. For each cue,
# the error is how many presented frames after the first frame at or after the cue the overlay
# appeared with: the log's `overlay-shown` event names the overlay (its text) and follows the line
# of the frame it first appeared with; the item's frame lines give the frames presented. A late
# or dropped frame around a cue does not count against the cue: the expected frame is the first
# one *presented* at or after the cue. Sound plays to nothing (--no-audio): the cue follows the
# display clock either way. The schedule's fallback playlist loops from midnight, so the show is
# started as of a midnight (--start-at) to begin with the clip's first frame.
#
# The reference is the ideal, 0 frames, so the ratio column holds the worst error in frames, late or early
# (the difference from the ideal), target <= 0; a cue whose overlay never appeared counts as FAIL.
source "$(dirname "$0")/common.sh"
cues=${CUES:-40}
seconds=${SECONDS_OF_VIDEO:-20}
build_vitrine
make_1080p cue${seconds}.mp4 "$seconds"
clip=$work/cue${seconds}.mp4
schedule=$work/cue-error.toml
log=$work/cue-error.jsonl
python3 - "$clip" "$schedule" "$cues" "$seconds" <<'PY'
import sys
clip, schedule, cues, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
lines = ['version = 1', 'timezone = "UTC"', 'fallback = "cues"', '',
         '[[playlists.cues.items]]', f'video = "{clip}"', '']
# From 0.5 s to 1 s before the end, at steps that are not a multiple of a frame (1/30 s) or a
# refresh (1/60 s), so cues land on frame times, just after them and just before them.
step = (seconds - 1.5) / max(1, cues - 1)
for index in range(cues):
    at = 0.5 + index * step
    lines += ['  [[playlists.cues.items.overlays]]', f'  text = "cue {index}"',
              '  rect = [0.05, 0.05, 0.3, 0.08]', f'  at = "{at:.3f}s"', '  duration = "0.2s"', '']
open(schedule, "w").write("\n".join(lines))
PY
cat "$clip" > /dev/null
rm -f "$log"
"$vitrine" play "$schedule" --start-at 2026-01-05T00:00:00Z --display headless --mode 1920x1080@60 --no-audio --duration "$(python3 -c "print($seconds + 1)")" \
    --presentation-log "$log" > "$work/cue-error.out" 2>&1 || { tail -5 "$work/cue-error.out" >&2; exit 1; }
python3 - "$log" "$schedule" <<'PY'
import json, re, statistics, sys
log, schedule = sys.argv[1], sys.argv[2]
cues = {}
for match in re.finditer(r'text = "cue (\d+)"\n.*\n  at = "([0-9.]+)s"', open(schedule).read()):
    cues[int(match.group(1))] = float(match.group(2))
records = [json.loads(line) for line in open(log)]
frames = [r for r in records if r["type"] == "frame" and r["item"] == 0]
shown = {}
for r in records:
    if r["type"] == "event" and r["event"] == "overlay-shown" and r.get("item") == 0:
        found = re.search(r'cue (\d+)"', r.get("detail", ""))
        if found and int(found.group(1)) not in shown:
            shown[int(found.group(1))] = r["time"]
def seconds(t): return t[0] / t[1]
pts = [seconds(f["pts"]) for f in frames]
errors, missing = [], []
for index, cue in sorted(cues.items()):
    if index not in shown:
        missing.append(index)
        continue
    # The cue is given to the millisecond; the frame at or after it, exactly in the stream's time base.
    expected = next((i for i, p in enumerate(pts) if p >= cue - 1e-9), None)
    got = next((i for i, p in enumerate(pts) if abs(p - seconds(shown[index])) < 1e-9), None)
    if expected is None or got is None:
        missing.append(index)
        continue
    errors.append(got - expected)
print(f"overlay cue error, {len(cues)} text overlays on a 1080p30 clip, headless display 60 Hz, real time")
print(f"  frames presented: {len(frames)}, dropped: {frames[-1]['dropped'] if frames else '-'}")
print(f"  overlays shown: {len(errors)} of {len(cues)}" + (f" (never shown: {missing})" if missing else ""))
if errors:
    print(f"  error in frames (negative: early): worst {max(errors, key=abs)}, mean {statistics.mean(errors):.2f}, "
          f"histogram {dict(sorted({e: errors.count(e) for e in errors}.items()))}")
# An overlay shown early is as wrong as one shown late.
worst = max(abs(e) for e in errors) if errors and not missing else "n/a"
ours = f"worst {worst} frames, mean {statistics.mean(errors):.2f}" if errors else "none shown"
print("RESULT\t" + "\t".join([f"overlay cue error, {len(cues)} cues (frames late)", ours, "ideal 0 frames",
                              str(worst), "<= 0", "pass" if worst == 0 else "FAIL"]))
PY
