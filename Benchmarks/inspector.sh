#!/usr/bin/env bash
# The inspector under load while a 1080p30 H.264 clip plays on a 1920x1080@30 headless display:
# requests per second of GET /api/status over 50 keep-alive connections asking as fast as they are
# answered (Tests/Load/inspector_clients.py, asyncio, one thread, at nice 19: it stands in for
# remote clients, which would not share the screen's CPU), and the render thread's
# frame-interval p99 and dropped frames from the presentation log, with and without that load,
# side by side. SECONDS_OF_LOAD (20) per run.
source "$(dirname "$0")/common.sh"
seconds=${SECONDS_OF_LOAD:-20}
build_vitrine
make_1080p inspector1080p.mp4 30
folder=$work/inspector
rm -rf "$folder" && mkdir -p "$folder"
printf 'version = 1\nfallback = "loop"\n[[playlists.loop.items]]\nvideo = "%s"\n' "$work/inspector1080p.mp4" > "$folder/show.toml"
echo "benchmark-token-0123456789" > "$folder/token" && chmod 600 "$folder/token"
port=$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
cat > "$folder/vitrine.toml" <<TOML
schedule = "show.toml"
state_directory = "$folder/state"
[display]
kind = "headless"
mode = "1920x1080@30"
[audio]
enabled = false
[import]
directory = "$folder/bundles"
[inspector]
listen = "127.0.0.1:$port"
token_file = "token"
TOML

run() {  # run NAME LOAD(0|1): plays for $seconds (+2 s of start), with or without the clients
    local name=$1 load=$2
    "$vitrine" play --config "$folder/vitrine.toml" --presentation-log "$folder/$name.jsonl" --duration $((seconds + 4)) 2>/dev/null &
    local player=$!
    until curl -s -o /dev/null "http://127.0.0.1:$port/healthz"; do sleep 0.1; done
    sleep 2
    if [ "$load" = 1 ]; then
        nice -n 19 python3 "$root/Tests/Load/inspector_clients.py" "$port" "benchmark-token-0123456789" 50 "$seconds" flood > "$folder/$name.clients"
    else
        sleep "$seconds"
    fi
    wait "$player"
}
run quiet 0
run loaded 1
python3 - "$folder" "$seconds" <<'PY'
import json, sys
folder, seconds = sys.argv[1], float(sys.argv[2])
def frames(name):
    rows = [json.loads(l) for l in open(f"{folder}/{name}.jsonl") if '"type":"frame"' in l]
    # The load's window: after the first 2 s, for `seconds`.
    start = rows[0]["presented_ns"] + 2e9
    window = [r for r in rows if start <= r["presented_ns"] <= start + seconds * 1e9]
    gaps = sorted((b["presented_ns"] - a["presented_ns"]) / 1e6 for a, b in zip(window, window[1:]))
    p99 = gaps[int(len(gaps) * 0.99)] if gaps else float("nan")
    return len(window), window[-1]["dropped"] - window[0]["dropped"], p99
q, l = frames("quiet"), frames("loaded")
clients = json.load(open(f"{folder}/loaded.clients"))
print(f"inspector under load, {seconds:.0f} s of a 1080p30 clip on a 1920x1080@30 headless display")
print(f"  without clients : {q[0]} frames, {q[1]} dropped, frame-interval p99 {q[2]:.1f} ms")
print(f"  50 connections  : {l[0]} frames, {l[1]} dropped, frame-interval p99 {l[2]:.1f} ms; "
      f"GET /api/status {clients['requests_per_second']} requests/s ({clients['answered']} answered, {clients['errors']} errors)")
print(f"  frame-interval p99 ratio (loaded / quiet, target 1.0): {l[2] / q[2]:.3f}")
r = l[2] / q[2]
print(f"RESULT\tframe-interval p99 under inspector load ({clients['requests_per_second']} req/s)\t{l[2]:.1f} ms loaded\t{q[2]:.1f} ms quiet\t{r:.3f}\t<= 1.05\t{'pass' if r <= 1.05 else 'FAIL'}")
PY
