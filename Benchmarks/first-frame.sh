#!/usr/bin/env bash
# Start to first frame: from `vitrine play FILE` being started to its first frame presented on the
# headless display (the presentation log's presented_ns, CLOCK_MONOTONIC, against the monotonic
# instant just before the process was spawned), beside mpv's start to first frame on the same
# 1080p30 H.264/AAC file (`mpv --frames=1 --vo=null --ao=null`, timed until it exits: an upper bound
# for mpv, which is given the null outputs). Sound off on both (no sound card here). Medians of
# RUNS (20) each, alternating, warm page cache; target ratio <= 1.0.
source "$(dirname "$0")/common.sh"
runs=${RUNS:-20}
build_vitrine
command -v mpv > /dev/null || { echo "mpv is missing: apt-get install mpv" >&2; exit 1; }
make_1080p first1080p.mp4 10
python3 - "$vitrine" "$work" "$work/first1080p.mp4" "$runs" <<'PY'
import json, os, statistics, subprocess, sys, time
vitrine, work, clip, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
log = f"{work}/first-frame.jsonl"

def vitrine_run():
    if os.path.exists(log): os.remove(log)
    t0 = time.monotonic_ns()
    p = subprocess.Popen([vitrine, "play", clip, "--display", "headless", "--mode", "1920x1080@60", "--no-audio",
                          "--presentation-log", log], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            with open(log) as f:
                for line in f:
                    if '"type":"frame"' in line:
                        p.kill(); p.wait()
                        return (json.loads(line)["presented_ns"] - t0) / 1e6
        except FileNotFoundError:
            pass
        time.sleep(0.001)
    p.kill(); p.wait()
    raise SystemExit("vitrine presented no frame within 60 s")

def mpv_run():
    t0 = time.monotonic_ns()
    subprocess.run(["mpv", "--no-config", "--really-quiet", "--vo=null", "--ao=null", "--frames=1", clip],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.monotonic_ns() - t0) / 1e6

vitrine_run(); mpv_run()  # warm the page cache and the shader cache
ours, theirs = [], []
for _ in range(runs):
    ours.append(vitrine_run())
    theirs.append(mpv_run())
v, m = statistics.median(ours), statistics.median(theirs)
print(f"start to first frame, 1080p30 H.264, median of {runs}")
print(f"  vitrine play (headless EGL 1920x1080): {v:.0f} ms  (min {min(ours):.0f}, max {max(ours):.0f})")
print(f"  mpv --vo=null --frames=1 (to exit)   : {m:.0f} ms  (min {min(theirs):.0f}, max {max(theirs):.0f})")
print(f"  ratio (vitrine / mpv, target <= 1.0): {v / m:.3f}")
print(f"RESULT\tstart to first frame, 1080p H.264\t{v:.0f} ms\tmpv {m:.0f} ms\t{v / m:.3f}\t<= 1.0\t{'pass' if v / m <= 1.0 else 'FAIL'}")
PY
