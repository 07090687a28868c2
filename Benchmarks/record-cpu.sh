#!/usr/bin/env bash
# Recording cost: `vitrine record --format flac --duration 60` against
# `ffmpeg -f alsa -i DEVICE -t 60 out.flac`, both capturing from the same source: ALSA's file plugin
# reading a raw file as capture data (`infile`) over a clocked slave (a private PulseAudio null
# sink's monitor through the "pulse" plugin), so both run in real time and record the same samples.
# Prints CPU-seconds (user+sys) and the ratio vitrine / ffmpeg (<= 1.0 is the target).
# Needs pulseaudio and libasound2-plugins (scripts/setup.sh).
source "$(dirname "$0")/common.sh"
seconds=${SECONDS_OF_AUDIO:-60}
build_vitrine
command -v pulseaudio > /dev/null || { echo "pulseaudio is missing: apt-get install --no-install-recommends pulseaudio pulseaudio-utils libasound2-plugins" >&2; exit 1; }

# Programme-like sound: a tone over pink noise, 16-bit stereo at 48 kHz, longer than the recording.
source_raw=$work/record-source-$((seconds + 10))s.raw
[ -s "$source_raw" ] || ff -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$((seconds + 10))" \
    -f lavfi -i "anoisesrc=color=pink:amplitude=0.1:sample_rate=48000:duration=$((seconds + 10))" \
    -filter_complex "amix=inputs=2:normalize=0" -ac 2 -f s16le "$source_raw"

start_null_sink bench
trap 'kill "$pulse_pid" 2> /dev/null || true; rm -rf "$runtime"' EXIT
cat >> "$runtime/asoundrc" <<EOF
pcm.bench_monitor { type pulse server "unix:$runtime/native" device "bench.monitor" }
pcm.bench_source { type file slave.pcm "bench_monitor" file "/dev/null" infile "$source_raw" format "raw" }
EOF

rm -f "$work/record-ffmpeg.flac" "$work/record-vitrine.flac"
measure "$work/ffmpeg-record.time" ffmpeg -hide_banner -loglevel error -nostdin -y -f alsa -sample_rate 48000 -channels 2 \
    -i bench_source -t "$seconds" "$work/record-ffmpeg.flac"
measure "$work/vitrine-record.time" "$vitrine" record "$work/record-vitrine.flac" --device bench_source --duration "$seconds" --format flac
read -r f_wall f_user f_sys f_rss < "$work/ffmpeg-record.time"
read -r v_wall v_user v_sys v_rss < "$work/vitrine-record.time"
f_cpu=$(python3 -c "print(round($f_user+$f_sys,2))")
v_cpu=$(python3 -c "print(round($v_user+$v_sys,2))")
duration() { ffprobe -v error -show_entries format=duration -of csv=p=0 "$1"; }
echo "record ${seconds}s to FLAC from a clocked ALSA source (file plugin over a PulseAudio null sink's monitor)"
echo "  ffmpeg : wall ${f_wall}s cpu ${f_cpu}s maxrss ${f_rss}kB, file $(duration "$work/record-ffmpeg.flac") s"
echo "  vitrine: wall ${v_wall}s cpu ${v_cpu}s maxrss ${v_rss}kB, file $(duration "$work/record-vitrine.flac") s"
echo "  cpu ratio (vitrine / ffmpeg, target <= 1.0): $(ratio "$v_cpu" "$f_cpu")"
result "recording CPU, ${seconds}s to FLAC from a clocked ALSA device" "${v_cpu} s" "ffmpeg ${f_cpu} s" "$(ratio "$v_cpu" "$f_cpu")" "<= 1.0"
