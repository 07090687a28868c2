#!/usr/bin/env bash
# Start to first frame and to first sound: from a player's process being started (the monotonic
# instant just before the spawn) to its first frame presented, and to its first audio sample
# played by a clocked sound device, on the same 1080p30 H.264/AAC file (a 440 Hz tone from its
# first sample). Vitrine against mpv and ffplay; medians of RUNS (10) runs each, the players
# alternating, warm page cache. Target ratio <= 1.0 on every row.
#
# First frame:
#   vitrine: the presentation log's first frame line (`presented_ns`, CLOCK_MONOTONIC) on the
#            headless display, 1920x1080@60;
#   mpv:     `mpv --vo=null`, the moment its "first video frame after restart shown" line (logged
#            right after the null output took the frame) reaches us on its output;
#   ffplay:  ffplay needs a window to show video (`-nodisp` shows none), so SDL's offscreen video
#            driver gives it one; its first frame is the moment its "Created WxH texture" line
#            (logged at the first frame's upload, just before it is drawn) reaches us: a lower bound.
#   Without sound (`--no-audio`, `--no-audio`, `-an`).
#   For context the log also gives `vitrine play --display null` (no renderer, as mpv's --vo=null
#   has none); the row is the headless display's, which brings up EGL and llvmpipe and draws.
# First audio sample:
#   All three play to the same ALSA PCM, a private PulseAudio null sink through ALSA's "pulse"
#   plugin (vitrine `--audio-device bench`, `mpv --ao=alsa --audio-device=alsa/bench`,
#   `SDL_AUDIODRIVER=alsa AUDIODEV=bench ffplay -nodisp -autoexit`). The sink's monitor is
#   recorded all along (`parec`, 5 ms latency); the first sample is the first one above -54 dBFS
#   that the sink played, stamped when its chunk arrived minus the samples after it in that chunk.
#   This is where "written" matters: the moment the device consumes the sample. (ALSA's file
#   plugin in front of the sink was tried and rejected: it writes its file when its buffer fills,
#   not when the player writes, so the file grows up to a buffer's time late, differently for
#   players that fill the buffer and players that write as the device consumes.)
#   Two starts of the device:
#   - running: another client keeps the sink playing silence at 10 ms latency (`pacat`), so a new
#     stream is consumed at once, as by a sound card;
#   - slow-starting: the sink is idle, and then takes 1 to 2.5 s to start consuming a new stream.
#     Vitrine's first frame and first sample are reported for it beside mpv's.
source "$(dirname "$0")/common.sh"
runs=${RUNS:-10}
build_vitrine
for tool in mpv ffplay pulseaudio parec pacat; do
    command -v "$tool" > /dev/null || { echo "$tool is missing: bash scripts/setup.sh" >&2; exit 1; }
done
make_1080p first1080p.mp4 10
cat "$work/first1080p.mp4" > /dev/null
start_null_sink bench
trap 'kill "$pulse_pid" 2> /dev/null || true; rm -rf "$runtime"' EXIT
python3 - "$vitrine" "$work" "$work/first1080p.mp4" "$runs" "$runtime" <<'PY'
import array, fcntl, json, os, signal, statistics, subprocess, sys, threading, time
vitrine, work, clip, runs, runtime = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
log = f"{work}/first-frame.jsonl"
pulse = dict(os.environ, PULSE_SERVER=f"unix:{runtime}/native")
RATE, LOUD = 48000, 64  # 64 / 32768: -54 dBFS

class Monitor:
    """Records the null sink's monitor; remembers when loud samples were played."""
    def __init__(self):
        self.lock = threading.Lock()
        self.heard = []  # host times (ns) of the first loud sample of each loud chunk
        self.last_loud = 0
        self.process = subprocess.Popen(
            ["parec", "-d", "bench.monitor", "--raw", "--format=s16le", f"--rate={RATE}", "--channels=2", "--latency-msec=5"],
            stdout=subprocess.PIPE, env=pulse)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        fd = self.process.stdout.fileno()
        pending = b""
        while True:
            chunk = os.read(fd, 8192)
            now = time.monotonic_ns()
            if not chunk: return
            data = pending + chunk
            usable = len(data) - len(data) % 4
            pending = data[usable:]
            samples = array.array("h", data[:usable])
            loud = next((i for i, v in enumerate(samples) if v >= LOUD or v <= -LOUD), None)
            if loud is None: continue
            frames_after = (len(samples) - loud) // 2
            with self.lock:
                self.heard.append(now - frames_after * 1_000_000_000 // RATE)
                self.last_loud = now

    def first_after(self, t0):
        with self.lock:
            return next((t for t in self.heard if t >= t0), None)

    def wait_silent(self, quiet_ns=300_000_000, timeout=10):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if time.monotonic_ns() - self.last_loud > quiet_ns: return
            time.sleep(0.02)

    def stop(self):
        self.process.kill(); self.process.wait()

monitor = None

def run(command, env=None, frame_line=None, want_frame=True, want_sound=False):
    """Starts `command`; returns (ms to first frame, ms to first sound sample) as asked."""
    if os.path.exists(log): os.remove(log)
    if monitor: monitor.wait_silent()
    t0 = time.monotonic_ns()
    # mpv logs to standard output, ffplay to standard error: both are read.
    p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    fd = p.stdout.fileno()
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    frame = sound = None
    text = b""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            chunk = b""
        now = time.monotonic_ns()
        if chunk:
            text += chunk
            if want_frame and frame is None and frame_line and frame_line.encode() in text:
                frame = now
        if want_frame and frame is None and frame_line is None:
            try:
                with open(log) as f:
                    for line in f:
                        if '"type":"frame"' in line:
                            frame = json.loads(line)["presented_ns"]
                            break
            except FileNotFoundError:
                pass
        if want_sound and sound is None:
            sound = monitor.first_after(t0)
        if (frame is not None or not want_frame) and (sound is not None or not want_sound):
            break
        time.sleep(0.001)
    p.kill(); p.wait()
    if (want_frame and frame is None) or (want_sound and sound is None):
        raise SystemExit(f"no {'frame' if want_frame and frame is None else 'sound'} within 30 s from {command[0]}: "
                         + text.decode(errors="replace")[-300:])
    ms = lambda t: (t - t0) / 1e6 if t is not None else None
    return ms(frame), ms(sound)

def vitrine_cmd(*extra):
    return [vitrine, "play", clip, "--display", "headless", "--mode", "1920x1080@60", "--presentation-log", log, *extra]

mpv_frame = "first video frame after restart shown"
ffplay_frame = "Created 1920x1080 texture"
mpv_base = ["mpv", "--no-config", "--msg-level=all=warn,cplayer=v", "--vo=null"]
offscreen = dict(os.environ, SDL_VIDEODRIVER="offscreen")
alsa_sdl = dict(pulse, SDL_AUDIODRIVER="alsa", AUDIODEV="bench")

cases = {
    # name: (command, env, frame line, wants frame, wants sound)
    "vitrine silent": (vitrine_cmd("--no-audio"), None, None, True, False),
    # Context, not a row: the same start without a renderer, as mpv's --vo=null has none.
    "vitrine null silent": ([vitrine, "play", clip, "--display", "null", "--presentation-log", log, "--no-audio"], None, None, True, False),
    "mpv silent": (mpv_base + ["--no-audio", clip], None, mpv_frame, True, False),
    "ffplay silent": (["ffplay", "-autoexit", "-an", "-loglevel", "verbose", clip], offscreen, ffplay_frame, True, False),
    "vitrine sound": (vitrine_cmd("--audio-device", "bench"), pulse, None, True, True),
    "mpv sound": (mpv_base + ["--ao=alsa", "--audio-device=alsa/bench", clip], pulse, mpv_frame, True, True),
    "ffplay sound": (["ffplay", "-nodisp", "-autoexit", "-loglevel", "error", clip], alsa_sdl, None, False, True),
}
times = {}
def measure(names, rounds):
    for _ in range(rounds):
        for name in names:
            command, env, line, want_frame, want_sound = cases[name]
            frame, sound = run(command, env, line, want_frame, want_sound)
            times.setdefault(name, []).append((frame, sound))

silent = ["vitrine silent", "mpv silent", "ffplay silent", "vitrine null silent"]
sounding = ["vitrine sound", "mpv sound", "ffplay sound"]
measure(silent, 1)  # warm the page cache and the shader cache
times.clear()
measure(silent, runs)
# The running device: another client keeps the sink busy with silence; the monitor records all along.
monitor = Monitor()
keeper = subprocess.Popen(["pacat", "--playback", "-d", "bench", "--raw", "--format=s16le", f"--rate={RATE}", "--channels=2",
                           "--latency-msec=10"], stdin=open("/dev/zero", "rb"), env=pulse)
time.sleep(0.5)
measure(sounding, runs)
running = {name: times.pop(name) for name in sounding}
keeper.kill(); keeper.wait()
monitor.stop()
# The slow-starting device: the sink idles between runs. A monitor recording at low latency all
# along would keep it awake, so each run gets a fresh one, started just before the player.
for _ in range(runs):
    for name in sounding:
        time.sleep(2.5)
        monitor = Monitor()
        time.sleep(0.3)
        command, env, line, want_frame, want_sound = cases[name]
        times.setdefault(name, []).append(run(command, env, line, want_frame, want_sound))
        monitor.stop()
slow = {name: times.pop(name) for name in sounding}

def median(samples, index):
    values = [s[index] for s in samples if s[index] is not None]
    return statistics.median(values), min(values), max(values)

def show(label, samples, index):
    m, lo, hi = median(samples, index)
    print(f"  {label:<58}: {m:6.0f} ms  (min {lo:.0f}, max {hi:.0f})")
    return m

print(f"start to first frame and first sound, 1080p30 H.264/AAC, median of {runs}")
print("first frame, no sound")
v = show("vitrine play (headless EGL 1920x1080@60)", times["vitrine silent"], 0)
m = show("mpv --vo=null (first frame shown)", times["mpv silent"], 0)
f = show("ffplay, SDL offscreen (first texture upload, lower bound)", times["ffplay silent"], 0)
show("context: vitrine play --display null (no renderer, like --vo=null)", times["vitrine null silent"], 0)
print("sound on a running clocked device (PulseAudio null sink kept busy)")
vf = show("vitrine play --audio-device: first frame", running["vitrine sound"], 0)
vs = show("vitrine play --audio-device: first sample played", running["vitrine sound"], 1)
mf = show("mpv --ao=alsa: first frame", running["mpv sound"], 0)
ms = show("mpv --ao=alsa: first sample played", running["mpv sound"], 1)
fs = show("ffplay -nodisp -autoexit: first sample played", running["ffplay sound"], 1)
print("sound on a slow-starting clocked device (the idle PulseAudio null sink)")
svf = show("vitrine play --audio-device: first frame", slow["vitrine sound"], 0)
svs = show("vitrine play --audio-device: first sample played", slow["vitrine sound"], 1)
smf = show("mpv --ao=alsa: first frame", slow["mpv sound"], 0)
sms = show("mpv --ao=alsa: first sample played", slow["mpv sound"], 1)
sfs = show("ffplay -nodisp -autoexit: first sample played", slow["ffplay sound"], 1)

def row(what, ours, theirs, reference):
    r = ours / theirs
    print("RESULT\t" + "\t".join([what, f"{ours:.0f} ms", f"{reference} {theirs:.0f} ms", f"{r:.3f}", "<= 1.0",
                                  "pass" if r <= 1.0 else "FAIL"]))

row("start to first frame, 1080p H.264", v, m, "mpv --vo=null")
row("start to first frame vs ffplay, 1080p H.264", v, f, "ffplay (offscreen)")
row("start to first audio sample played, running device", vs, ms, "mpv --ao=alsa")
row("start to first audio sample vs ffplay, running device", vs, fs, "ffplay -nodisp")
row("start to first frame, slow-starting audio device", svf, smf, "mpv --ao=alsa")
row("start to first audio sample, slow-starting device", svs, sms, "mpv --ao=alsa")
PY
