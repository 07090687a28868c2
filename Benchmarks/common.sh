# Shared helpers for the benchmark scripts: build once, make test media once, measure with GNU time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${BENCH_WORK:-$root/.build/bench}
mkdir -p "$work"
vitrine=""

# The shipping build (scripts/release-build.sh: release, Swift's runtime linked in), into
# $vitrine. Always asked of the package manager, which rebuilds only what changed (a second or two
# when nothing did): a binary left from older sources would be measured as if it were this checkout's.
build_vitrine() {
    vitrine=$(bash "$root/scripts/release-build.sh")
}

ff() { ffmpeg -hide_banner -loglevel error -nostdin -y "$@"; }

# make_1080p NAME SECONDS [extra ffmpeg args]: a 1080p30 H.264 clip with AAC audio.
make_1080p() {
    local name=$1 seconds=$2
    [ -s "$work/$name" ] && return 0
    ff -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=$seconds" \
       -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$seconds" \
       -c:v libx264 -preset veryfast -pix_fmt yuv420p -g 60 -c:a aac -b:a 128k "$work/$name"
}

# measure OUTFILE command...: runs the command under GNU time; OUTFILE gets
# "elapsed user system maxrss_kb".
measure() {
    local out=$1; shift
    /usr/bin/time -f "%e %U %S %M" -o "$out" "$@" > /dev/null
}

# start_null_sink NAME: a private PulseAudio with a null sink NAME (a clocked sound device without a
# sound card), reachable through ALSA's "pulse" plugin as PCM NAME; sets $runtime (its folder, for
# more ALSA definitions in $runtime/asoundrc), $pulse_pid and ALSA_CONFIG_PATH. The caller stops it
# (kill $pulse_pid; rm -rf $runtime).
start_null_sink() {
    local name=$1
    runtime=$(mktemp -d)
    XDG_RUNTIME_DIR=$runtime HOME=$runtime pulseaudio -n --daemonize=no --exit-idle-time=-1 --use-pid-file=no \
        --disable-shm=yes -L "module-null-sink sink_name=$name" \
        -L "module-native-protocol-unix auth-anonymous=1 socket=$runtime/native" > /dev/null 2>&1 &
    pulse_pid=$!
    for _ in $(seq 100); do [ -S "$runtime/native" ] && break; sleep 0.05; done
    printf 'pcm.%s { type pulse server "unix:%s/native" }\n' "$name" "$runtime" > "$runtime/asoundrc"
    export ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:$runtime/asoundrc
}

# result WHAT VITRINE REFERENCE RATIO TARGET: the benchmark's one machine-readable line, which
# Benchmarks/run-all.sh gathers into its table. TARGET is "<= X" or ">= X"; pass when RATIO meets it.
result() {
    python3 - "$@" <<'PY'
import sys
what, ours, theirs, ratio, target = sys.argv[1:6]
op, bound = target.split()
try:
    ok = float(ratio) <= float(bound) if op == "<=" else float(ratio) >= float(bound)
except ValueError:
    ok = False
print("RESULT\t" + "\t".join([what, ours, theirs, ratio, target, "pass" if ok else "FAIL"]))
PY
}

ratio() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f'{a / b:.3f}' if b else 'n/a')" "$1" "$2"; }
