#!/usr/bin/env bash
# Audio playback cost: `vitrine play --display null --audio-device` of a 60 s AAC track to a
# clocked null device (a private PulseAudio null sink through ALSA's "pulse" plugin) against
# `mpv --no-config --no-video --ao=alsa` to the same device: neither opens a renderer for a track
# without a picture. Prints CPU-seconds (user+sys)
# and the ratio vitrine / mpv (<= 1.0 is the target).
# Needs pulseaudio, pulseaudio-utils and libasound2-plugins (scripts/setup.sh), and the
# `--audio-device` flag of `vitrine play` (wired to Audio's ALSAOutput.open).
source "$(dirname "$0")/common.sh"
seconds=${SECONDS_OF_AUDIO:-60}
build_vitrine
command -v mpv > /dev/null || { echo "mpv is missing: apt-get install mpv" >&2; exit 1; }
command -v pulseaudio > /dev/null || { echo "pulseaudio is missing: apt-get install --no-install-recommends pulseaudio pulseaudio-utils libasound2-plugins" >&2; exit 1; }

track=$work/audio${seconds}.m4a
[ -s "$track" ] || ff -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$seconds" -ac 2 -c:a aac -b:a 128k "$track"

start_null_sink bench
trap 'kill "$pulse_pid" 2> /dev/null || true; rm -rf "$runtime"' EXIT

measure "$work/mpv-audio.time" mpv --no-config --really-quiet --no-video --ao=alsa --audio-device=alsa/bench "$track"
measure "$work/vitrine-audio.time" "$vitrine" play --display null --audio-device bench "$track"
read -r m_wall m_user m_sys m_rss < "$work/mpv-audio.time"
read -r v_wall v_user v_sys v_rss < "$work/vitrine-audio.time"
m_cpu=$(python3 -c "print(round($m_user+$m_sys,2))")
v_cpu=$(python3 -c "print(round($v_user+$v_sys,2))")
echo "play ${seconds}s AAC to a clocked null ALSA device (PulseAudio null sink)"
echo "  mpv    : wall ${m_wall}s cpu ${m_cpu}s maxrss ${m_rss}kB"
echo "  vitrine: wall ${v_wall}s cpu ${v_cpu}s maxrss ${v_rss}kB"
echo "  cpu ratio (vitrine / mpv, target <= 1.0): $(ratio "$v_cpu" "$m_cpu")"
result "audio playback CPU, AAC to a clocked ALSA device" "${v_cpu} s" "mpv ${m_cpu} s" "$(ratio "$v_cpu" "$m_cpu")" "<= 1.0"
