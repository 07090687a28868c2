#!/usr/bin/env bash
# Decode throughput: `vitrine bench decode` (the playback pipeline: demux thread, bounded queues,
# frame-threaded libavcodec, audio resampled to float) against `ffmpeg -threads N -i FILE -f null -`
# on the same 1080p H.264/AAC clip, both using N decoding threads. Prints the median wall times of
# RUNS (15) and the ratio ffmpeg_time / vitrine_time (>= 1.0 is the target: vitrine at least as fast as ffmpeg).
source "$(dirname "$0")/common.sh"
threads=${THREADS:-$(nproc)}
seconds=${SECONDS_OF_VIDEO:-20}
build_vitrine
make_1080p decode1080p.mp4 "$seconds"
clip=$work/decode1080p.mp4
runs=${RUNS:-15}
# Warm the page cache, then RUNS runs each, alternating; the medians are compared. One run differs
# from the next by up to ±15 % on a shared 2-core machine, more than the gap measured: a median of
# 5 read 0.951 one day and 1.000 another, so 15 runs each.
rm -f "$work"/ffmpeg-*.time "$work"/vitrine-*.time
cat "$clip" > /dev/null
for run in $(seq "$runs"); do
    measure "$work/ffmpeg-$run.time" ffmpeg -hide_banner -loglevel error -nostdin -threads "$threads" -i "$clip" -f null -
    measure "$work/vitrine-$run.time" "$vitrine" bench decode --threads "$threads" "$clip"
done
median() { python3 -c "import statistics, sys; print(statistics.median(float(open(f).read().split()[int(sys.argv[1])]) for f in sys.argv[2:]))" "$@"; }
f_wall=$(median 0 "$work"/ffmpeg-*.time); v_wall=$(median 0 "$work"/vitrine-*.time)
f_cpu=$(python3 -c "import statistics, sys; print(round(statistics.median(sum(map(float, open(f).read().split()[1:3])) for f in sys.argv[1:]), 2))" "$work"/ffmpeg-*.time)
v_cpu=$(python3 -c "import statistics, sys; print(round(statistics.median(sum(map(float, open(f).read().split()[1:3])) for f in sys.argv[1:]), 2))" "$work"/vitrine-*.time)
echo "decode 1080p30 H.264 ${seconds}s, $threads threads, median of $runs"
echo "  ffmpeg : wall ${f_wall}s cpu ${f_cpu}s  (walls: $(cut -d' ' -f1 "$work"/ffmpeg-*.time | tr '\n' ' '))"
echo "  vitrine: wall ${v_wall}s cpu ${v_cpu}s  (walls: $(cut -d' ' -f1 "$work"/vitrine-*.time | tr '\n' ' '))"
echo "  speed ratio (ffmpeg wall / vitrine wall, target >= 1.0): $(ratio "$f_wall" "$v_wall")"
result "decode throughput, 1080p H.264 (wall)" "${v_wall} s" "ffmpeg -f null ${f_wall} s" "$(ratio "$f_wall" "$v_wall")" ">= 1.0"
