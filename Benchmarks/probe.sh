#!/usr/bin/env bash
# Benchmark: `vitrine probe --json` against `ffprobe -show_format -show_streams -of json`
# on the same files, run alternately (vitrine, ffprobe, vitrine, ffprobe, ...) so that both
# see the same machine load and the same page cache. Prints the median wall time of each
# per file and the ratio vitrine/ffprobe; the target is a median ratio <= 1.0.
#
#   Benchmarks/probe.sh [RUNS]          (default 30 runs of each per file)
#   VITRINE=path/to/vitrine Benchmarks/probe.sh
#
# Uses the shipping build of vitrine (release, static Swift standard library, as common.sh builds it)
# and the fixtures from scripts/fixtures.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
[ -s Fixtures/generated/h264_aac.mp4 ] || bash scripts/fixtures.sh
vitrine=${VITRINE:-}
if [ -z "$vitrine" ]; then
    source Benchmarks/common.sh  # build_vitrine: the one shipping build, in $vitrine
    build_vitrine
fi
command -v ffprobe >/dev/null || { echo "probe.sh: ffprobe is not installed" >&2; exit 1; }

python3 - "$vitrine" "$runs" Fixtures/generated/{h264_aac.mp4,hevc.mkv,vp9_opus.webm,mpeg2.ts,rotated.mp4,ntsc.mp4,multilang.mkv,tagged.m4a} <<'PY'
import statistics, subprocess, sys, time

vitrine, runs, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
commands = {
    "vitrine": lambda f: [vitrine, "probe", "--json", f],
    "ffprobe": lambda f: ["ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", f],
}

def timed(argv):
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start

print(f"{'file':<20} {'vitrine ms':>11} {'ffprobe ms':>11} {'ratio':>7}")
ratios = []
for path in files:
    for argv in (commands["vitrine"](path), commands["ffprobe"](path)):  # warm the page cache
        timed(argv)
    samples = {"vitrine": [], "ffprobe": []}
    for _ in range(runs):
        for name in ("vitrine", "ffprobe"):
            samples[name].append(timed(commands[name](path)))
    ours, theirs = statistics.median(samples["vitrine"]), statistics.median(samples["ffprobe"])
    ratios.append(ours / theirs)
    print(f"{path.split('/')[-1]:<20} {ours * 1000:>11.2f} {theirs * 1000:>11.2f} {ours / theirs:>7.3f}")
print(f"median wall-time ratio vitrine/ffprobe over {len(files)} files x {runs} runs: {statistics.median(ratios):.3f} (target <= 1.0)")
median = statistics.median(ratios)
print(f"RESULT\tprobe --json, median over {len(files)} files\t{median:.3f} x ffprobe\tffprobe -of json\t{median:.3f}\t<= 1.0\t{'pass' if median <= 1.0 else 'FAIL'}")
PY
