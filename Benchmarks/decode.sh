#!/usr/bin/env bash
# Decode throughput: `vitrine bench decode` (the playback pipeline: demux thread, bounded queues,
# frame-threaded libavcodec, audio resampled to float) against `ffmpeg -threads N -i FILE -f null -`
# on the same 1080p H.264/AAC clip, both using N decoding threads. Prints wall times and the
# ratio ffmpeg_time / vitrine_time (>= 1.0 is the target: vitrine at least as fast as ffmpeg).
source "$(dirname "$0")/common.sh"
threads=${THREADS:-$(nproc)}
seconds=${SECONDS_OF_VIDEO:-20}
build_vitrine
make_1080p decode1080p.mp4 "$seconds"
clip=$work/decode1080p.mp4
# Warm the page cache, then one run each.
cat "$clip" > /dev/null
measure "$work/ffmpeg.time" ffmpeg -hide_banner -loglevel error -nostdin -threads "$threads" -i "$clip" -f null -
measure "$work/vitrine.time" "$vitrine" bench decode --threads "$threads" "$clip"
read -r f_wall f_user f_sys _ < "$work/ffmpeg.time"
read -r v_wall v_user v_sys _ < "$work/vitrine.time"
echo "decode 1080p30 H.264 ${seconds}s, $threads threads"
echo "  ffmpeg : wall ${f_wall}s cpu $(python3 -c "print(round($f_user+$f_sys,2))")s"
echo "  vitrine: wall ${v_wall}s cpu $(python3 -c "print(round($v_user+$v_sys,2))")s"
echo "  speed ratio (ffmpeg wall / vitrine wall, target >= 1.0): $(ratio "$f_wall" "$v_wall")"
result "decode throughput, 1080p H.264 (wall)" "${v_wall} s" "ffmpeg -f null ${f_wall} s" "$(ratio "$f_wall" "$v_wall")" ">= 1.0"
