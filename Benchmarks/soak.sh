#!/usr/bin/env bash
# Real-time soak: `vitrine play SCHEDULE` of a looping schedule (a video with sound and two overlays,
# three short clips, a still) on the headless display with sound through ALSA's file plugin (into
# /dev/null) over a clocked device (a private PulseAudio null sink), for DURATION, sampling every
# minute: resident memory, open file descriptors, threads, frames presented and dropped, and the A/V
# offset (the presentation log's audio_clock_s - pts_s, median and max of the minute's frames).
# Writes out/soak/soak.csv and, with gnuplot, out/soak/soak.png; prints the first and the last hour
# side by side (the target: the last hour's RSS peak within 5 % of the second hour's, FDs and
# threads flat, no frame dropped that the machine could show).
#
#   bash Benchmarks/soak.sh [DURATION]      (seconds, or with a unit: 90m, 2h; default 2h)
#   SAMPLE_SECONDS=60                      the sampling interval
source "$(dirname "$0")/common.sh"
duration=${1:-2h}
case $duration in
    *h) seconds=$(( ${duration%h} * 3600 )) ;;
    *m) seconds=$(( ${duration%m} * 60 )) ;;
    *s) seconds=${duration%s} ;;
    *) seconds=$duration ;;
esac
sample=${SAMPLE_SECONDS:-60}
build_vitrine
command -v pulseaudio > /dev/null || { echo "pulseaudio is missing (scripts/setup.sh installs it)" >&2; exit 1; }
bash "$root/scripts/fixtures.sh" > /dev/null
fixtures=$root/Fixtures/generated
out=$root/out/soak
rm -rf "$out" && mkdir -p "$out"

cat > "$out/soak.toml" <<TOML
version = 1
fallback = "soak"
[[playlists.soak.items]]
video = "$fixtures/h264_aac.mp4"
  [[playlists.soak.items.overlays]]
  image = "$fixtures/logo.png"
  rect = [0.7, 0.05, 0.25, 0.15]
  at = "1s"
  duration = "5s"
  fade_in = "0.5s"
  [[playlists.soak.items.overlays]]
  text = "Soak test: a ticker that never stops"
  ticker = true
  rect = [0.0, 0.9, 1.0, 0.08]
  at = "0s"
  duration = "9s"
[[playlists.soak.items]]
video = "$fixtures/queue1.mp4"
[[playlists.soak.items]]
video = "$fixtures/queue2.mp4"
[[playlists.soak.items]]
image = "$fixtures/cover.png"
duration = "3s"
[[playlists.soak.items]]
video = "$fixtures/queue3.mp4"
TOML

player_pid=""
start_null_sink soakclock
cleanup() { kill $player_pid "$pulse_pid" 2> /dev/null || true; rm -rf "$runtime"; }
trap cleanup EXIT
# The file plugin over the clocked sink: sound written as a file would be, at the device's pace.
echo 'pcm.soak { type file slave.pcm "soakclock" file "/dev/null" format "raw" }' >> "$runtime/asoundrc"

"$vitrine" play "$out/soak.toml" --display headless --mode 1280x720@30 --audio-device soak \
    --presentation-log "$out/presentation.jsonl" --duration "$((seconds + sample / 2))" 2> "$out/player.log" &
player_pid=$!
echo "soak: playing for $seconds s (pid $player_pid), sampling every $sample s into $out/soak.csv"

python3 - "$player_pid" "$out" "$seconds" "$sample" <<'PY'
import json, os, statistics, sys, time
pid, out, seconds, sample = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
log_path = f"{out}/presentation.jsonl"
csv = open(f"{out}/soak.csv", "w")
# "minute" is the sample's number: minutes with the default SAMPLE_SECONDS=60.
csv.write("minute,rss_mb,fds,threads,frames,dropped,av_offset_median_ms,av_offset_max_ms\n")
started = time.monotonic()
position, dropped, minute = 0, 0, 0
while True:
    next_sample = started + (minute + 1) * sample
    while time.monotonic() < next_sample:
        if not os.path.exists(f"/proc/{pid}"):
            break
        time.sleep(0.5)
    if not os.path.exists(f"/proc/{pid}/status"):
        break
    minute += 1
    status = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status") if ":" in line)
    rss = int(status["VmRSS"].split()[0]) / 1024
    threads = int(status["Threads"])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    frames, offsets = 0, []
    with open(log_path) as log:
        log.seek(position)
        for line in log:
            if not line.endswith("\n"):
                break
            position += len(line.encode())
            if '"type":"frame"' not in line:
                continue
            record = json.loads(line)
            frames += 1
            dropped = record["dropped"]   # since the player started
            if "audio_clock_s" in record:
                offsets.append((record["audio_clock_s"] - record["pts_s"]) * 1000)
    median = statistics.median(offsets) if offsets else float("nan")
    worst = max(offsets, key=abs) if offsets else float("nan")
    csv.write(f"{minute},{rss:.1f},{fds},{threads},{frames},{dropped},{median:.1f},{worst:.1f}\n")
    csv.flush()
    print(f"soak: minute {minute}: rss {rss:.1f} MB, {fds} fds, {threads} threads, {frames} frames, "
          f"{dropped} dropped in all, A/V offset median {median:.1f} ms (worst {worst:.1f})", flush=True)
PY
wait "$player_pid"
status=$?
echo "soak: the player exited with status $status"

if command -v gnuplot > /dev/null; then
    gnuplot <<GP
set terminal pngcairo size 1400,900
set output "$out/soak.png"
set datafile separator ","
set multiplot layout 2,2 title "Vitrine soak, $(date -u +%Y-%m-%d), $seconds s"
set xlabel "minute"
set title "resident memory (MB)"; plot "$out/soak.csv" using 1:2 skip 1 with lines notitle
set title "file descriptors and threads"; plot "$out/soak.csv" using 1:3 skip 1 with lines title "fds", "" using 1:4 skip 1 with lines title "threads"
set title "frames dropped (cumulative)"; plot "$out/soak.csv" using 1:6 skip 1 with lines notitle
set title "A/V offset (ms)"; plot "$out/soak.csv" using 1:7 skip 1 with lines title "median", "" using 1:8 skip 1 with lines title "worst"
unset multiplot
GP
    echo "soak: plot in $out/soak.png"
else
    echo "soak: no plot (gnuplot is missing: apt-get install gnuplot-nox)"
fi

python3 - "$out/soak.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
if len(rows) < 3:
    sys.exit("soak: too few samples for a summary")
def window(lo, hi):
    return [r for r in rows if lo < int(r["minute"]) <= hi]
last_minute = int(rows[-1]["minute"])
hours = last_minute // 60
# The second hour against the last (the first holds the start's warm-up); a run of two hours has
# no hour between them, so its first hour is the baseline; shorter runs compare halves.
if hours >= 3:
    early, late, what, baseline = window(60, 120), window(last_minute - 60, last_minute), "second hour vs last hour", "second hour"
elif hours == 2:
    early, late, what, baseline = window(0, 60), window(60, 120), "first hour vs second hour", "first hour"
else:
    early, late = window(0, max(1, last_minute // 2)), window(last_minute // 2, last_minute)
    what, baseline = "first half vs second half", "first half"
peak = lambda part, key: max(float(r[key]) for r in part)
print(f"soak summary over {last_minute} minutes ({what}):")
for key, name in (("rss_mb", "RSS peak (MB)"), ("fds", "file descriptors (max)"), ("threads", "threads (max)")):
    a, b = peak(early, key), peak(late, key)
    print(f"  {name:24} {a:10.1f} {b:10.1f}   ratio {b / a:.3f}")
print(f"  frames dropped in all: {rows[-1]['dropped']} of {sum(int(r['frames']) for r in rows)} presented")
offsets = [abs(float(r['av_offset_max_ms'])) for r in rows if r['av_offset_max_ms'] != 'nan']
if offsets:
    print(f"  worst A/V offset of any minute: {max(offsets):.1f} ms")
ratio = peak(late, "rss_mb") / peak(early, "rss_mb")
print(f"RESULT\tsoak RSS peak, last vs {baseline}\t{peak(late, 'rss_mb'):.1f} MB\t{peak(early, 'rss_mb'):.1f} MB\t{ratio:.3f}\t<= 1.05\t{'pass' if ratio <= 1.05 else 'FAIL'}")
PY
