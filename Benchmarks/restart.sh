#!/usr/bin/env bash
# Crash recovery: `kill -9` a `vitrine play SCHEDULE` on the headless display, start it again and
# time from the new process's start to its first presented frame (from the presentation log's
# presented_ns, CLOCK_MONOTONIC) — the programme's item at the programme's position, so mid-item,
# after an exact seek. Beside it, mpv's start-to-first-frame on the same 1080p file at a random
# position (`mpv --start=T --frames=1 --vo=null --ao=null`, until it exits: mpv is given the null
# video output and no schedule to read). Medians of RUNS (20) each; target ratio <= 1.5.
source "$(dirname "$0")/common.sh"
runs=${RUNS:-20}
build_vitrine
command -v mpv > /dev/null || { echo "mpv is missing: apt-get install mpv" >&2; exit 1; }
make_1080p restart1080p.mp4 30
clip=$work/restart1080p.mp4
cat > "$work/restart.toml" <<TOML
version = 1
fallback = "loop"
[[playlists.loop.items]]
video = "$clip"
TOML
python3 - "$vitrine" "$work" "$clip" "$runs" <<'PY'
import json, os, random, signal, statistics, subprocess, sys, time
vitrine, work, clip, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
schedule, state = f"{work}/restart.toml", f"{work}/restart-state"

def first_frame_ns(log, deadline=120):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            with open(log) as f:
                for line in f:
                    if '"type":"frame"' in line:
                        return json.loads(line)["presented_ns"]
        except FileNotFoundError:
            pass
        time.sleep(0.002)
    raise SystemExit(f"no frame in {log} after {deadline} s")

def start(index):
    log = f"{work}/restart-{index}.jsonl"
    if os.path.exists(log): os.remove(log)
    t0 = time.monotonic_ns()
    p = subprocess.Popen([vitrine, "play", schedule, "--display", "headless", "--no-audio",
                          "--state-directory", state, "--presentation-log", log],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, t0, log

restarts = []
p, _, log = start(0)
first_frame_ns(log)
for i in range(1, runs + 1):
    p.send_signal(signal.SIGKILL); p.wait()
    p, t0, log = start(i)
    restarts.append((first_frame_ns(log) - t0) / 1e6)
p.send_signal(signal.SIGKILL); p.wait()

mpv = []
for i in range(runs):
    position = random.uniform(1, 28)
    t0 = time.monotonic_ns()
    subprocess.run(["mpv", "--no-config", "--really-quiet", "--vo=null", "--ao=null", f"--start={position:.3f}",
                    "--frames=1", clip], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mpv.append((time.monotonic_ns() - t0) / 1e6)

v, m = statistics.median(restarts), statistics.median(mpv)
print(f"restart after kill -9 -> first frame, 1080p30 H.264 mid-item, median of {runs}")
print(f"  vitrine (headless EGL, schedule, exact seek): {v:.0f} ms  (min {min(restarts):.0f}, max {max(restarts):.0f})")
print(f"  mpv --vo=null start -> first frame -> exit  : {m:.0f} ms  (min {min(mpv):.0f}, max {max(mpv):.0f})")
print(f"  ratio (vitrine / mpv, target <= 1.5): {v / m:.3f}")
print(f"RESULT\tkill -9 to first frame, mid-item\t{v:.0f} ms\tmpv start to frame {m:.0f} ms\t{v / m:.3f}\t<= 1.5\t{'pass' if v / m <= 1.5 else 'FAIL'}")
PY
