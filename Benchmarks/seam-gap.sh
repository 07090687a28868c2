#!/usr/bin/env bash
# Seam gap: a queue of CLIPS (5) 1080p30 H.264/AAC clips of 3 s each, played in real time by
# `vitrine play A B C … --display null` (no pixels, a 60 Hz null output) and by mpv as a playlist
# with `--vo=null --gapless-audio=yes`, both with sound on the same clocked device: a private PulseAudio null sink
# through ALSA's "pulse" plugin, kept running by another client playing silence (`pacat`), as a
# sound card runs (the idle sink takes over a second to start a stream: that is first-frame.sh's
# slow-starting case, not a seam's). RUNS (3) runs each; the seams of every run are pooled.
# Like with like: neither draws. For context the log also gives Vitrine on its headless display
# (1920x1080@60, composited by llvmpipe on the same cores as the decoders), which the row does
# not count.
#
# The gap at a seam is how long the last frame of one item stays on screen past its own duration
# (1/30 s) before the first frame of the next item appears, in refreshes of a 60 Hz display
# (1/60 s), measured the same way for both from host times:
#   vitrine: the presentation log's `presented_ns` of the item's last frame and of the next
#            item's first frame;
#   mpv:     `--dump-stats` writes a `video-flip` record (mpv's clock, µs) for every frame handed
#            to the null video output, and `-v --msg-time` logs "first video frame after restart
#            shown" (the same clock, printed from mpv's 10 s start) right after each file's first
#            frame: the flip just before that line is the new file's first frame, the flip before
#            it the last frame of the previous file.
# A frame cut short at a seam counts as 0, not negative; gaps are rounded to 1/100 of a refresh
# (a 60 Hz refresh is a whole number of nanoseconds, two of them not exactly 1/30 s). For context the log also gives the
# longest frame interval in the second after each seam (a stall just after the switch), which
# the row does not count. The row compares the worst seam of each (target: vitrine <= mpv; the
# ideal is 0 refreshes); the ratio is 0 when both are 0.
source "$(dirname "$0")/common.sh"
clips=${CLIPS:-5}
runs=${RUNS:-3}
build_vitrine
command -v mpv > /dev/null || { echo "mpv is missing: apt-get install mpv" >&2; exit 1; }
command -v pulseaudio > /dev/null || { echo "pulseaudio is missing: apt-get install --no-install-recommends pulseaudio pulseaudio-utils libasound2-plugins" >&2; exit 1; }
files=()
for index in $(seq "$clips"); do
    make_1080p "seam$index.mp4" 3
    files+=("$work/seam$index.mp4")
done
cat "${files[@]}" > /dev/null

start_null_sink bench
PULSE_SERVER=unix:$runtime/native pacat --playback -d bench --raw --format=s16le --rate=48000 --channels=2 \
    --latency-msec=10 < /dev/zero &
keeper=$!
trap 'kill "$keeper" "$pulse_pid" 2> /dev/null || true; rm -rf "$runtime"' EXIT
sleep 0.5

for run in $(seq "$runs"); do
    rm -f "$work/seam-vitrine-$run.jsonl" "$work/seam-headless-$run.jsonl"
    "$vitrine" play "${files[@]}" --display null --refresh-rate 60 --audio-device bench \
        --presentation-log "$work/seam-vitrine-$run.jsonl" > "$work/seam-vitrine-$run.out" 2>&1
    "$vitrine" play "${files[@]}" --display headless --mode 1920x1080@60 --audio-device bench \
        --presentation-log "$work/seam-headless-$run.jsonl" > "$work/seam-headless-$run.out" 2>&1
    mpv --no-config --vo=null --ao=alsa --audio-device=alsa/bench --gapless-audio=yes -v --msg-time \
        --dump-stats="$work/seam-mpv-$run.stats" "${files[@]}" > "$work/seam-mpv-$run.out" 2>&1
done

python3 - "$work" "$runs" "$clips" <<'PY'
import json, re, statistics, sys
work, runs, clips = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
hz = 60.0

def after_seam(times, seam):
    """The longest frame interval (ms) in the second after the seam at host time `seam` (ns)."""
    later = [t for t in times if seam <= t <= seam + 1_000_000_000]
    return max(((b - a) / 1e6 for a, b in zip(later, later[1:])), default=0)

def vitrine_gaps(path):
    frames = [r for r in map(json.loads, open(path)) if r["type"] == "frame"]
    times = [f["presented_ns"] for f in frames]
    gaps, stalls = [], []
    for item in range(clips - 1):
        last = [f for f in frames if f["item"] == item]
        first = [f for f in frames if f["item"] == item + 1]
        if not last or not first:
            raise SystemExit(f"{path}: item {item} or {item + 1} presented no frames")
        interval = (first[0]["presented_ns"] - last[-1]["presented_ns"]) / 1e9
        gaps.append(max(0.0, round((interval - 1 / 30) * hz, 2)))
        stalls.append(after_seam(times, first[0]["presented_ns"]))
    return gaps, stalls, frames[-1]["dropped"]

def mpv_gaps(stats, log):
    flips = [int(line.split()[0]) for line in open(stats) if line.split()[1:3] == ["start", "video-flip"]]
    starts = [float(m.group(1)) for m in re.finditer(r"^\[\s*([0-9.]+)\]\s*(?:\[v\])?\[cplayer\] first video frame after restart shown",
                                                     open(log).read(), re.M)]
    if len(starts) != clips:
        raise SystemExit(f"{log}: {len(starts)} file starts logged, expected {clips}")
    gaps, stalls = [], []
    for start in starts[1:]:
        at = start * 1e6 + 10_000_000  # mpv's clock starts at 10 s; --msg-time prints it from 0
        before = [t for t in flips if t <= at]
        if len(before) < 2:
            raise SystemExit(f"{stats}: no flips before the file start at {start} s")
        interval = (before[-1] - before[-2]) / 1e6
        gaps.append(max(0.0, round((interval - 1 / 30) * hz, 2)))
        stalls.append(after_seam([t * 1000 for t in flips], before[-1] * 1000))
    return gaps, stalls

ours, theirs, dropped, our_stalls, their_stalls = [], [], [], [], []
drawn, drawn_dropped = [], []
for run in range(1, runs + 1):
    gaps, stalls, drops = vitrine_gaps(f"{work}/seam-vitrine-{run}.jsonl")
    ours += gaps
    our_stalls += stalls
    dropped.append(drops)
    gaps, _, drops = vitrine_gaps(f"{work}/seam-headless-{run}.jsonl")
    drawn += gaps
    drawn_dropped.append(drops)
    gaps, stalls = mpv_gaps(f"{work}/seam-mpv-{run}.stats", f"{work}/seam-mpv-{run}.out")
    theirs += gaps
    their_stalls += stalls
v, m = max(ours), max(theirs)
print(f"seam gap, {clips} clips of 3 s 1080p30 H.264/AAC, {runs} runs ({clips - 1} seams each), refreshes of 1/60 s")
print(f"  vitrine --display null (presentation log)  : worst {v:.1f}, mean {statistics.mean(ours):.2f}, all {[round(g, 1) for g in ours]}, dropped per run {dropped}")
print(f"  mpv --gapless-audio=yes (--vo=null flips)   : worst {m:.1f}, mean {statistics.mean(theirs):.2f}, all {[round(g, 1) for g in theirs]}")
print(f"  context, not counted: vitrine on the headless display (llvmpipe): worst {max(drawn):.1f}, mean {statistics.mean(drawn):.2f}, dropped per run {drawn_dropped}")
print(f"  longest frame interval in the second after a seam (ms): vitrine {max(our_stalls):.0f}, mpv {max(their_stalls):.0f}")
ratio = f"{v / m:.3f}" if m > 0 else ("0.000" if v == 0 else "inf")
ok = v <= m
print("RESULT\t" + "\t".join(["seam gap in a queue (refreshes, worst seam)", f"{v:.1f} (mean {statistics.mean(ours):.2f})",
                              f"mpv --gapless-audio {m:.1f} (mean {statistics.mean(theirs):.2f})", ratio, "<= 1.0",
                              "pass" if ok else "FAIL"]))
PY
