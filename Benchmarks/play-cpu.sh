#!/usr/bin/env bash
# Playback cost: `vitrine play` of a 1080p30 H.264/AAC clip to the null video and audio sinks
# against `mpv --no-config --vo=null --ao=null`, both in real time. Prints CPU-seconds (user+sys)
# and the ratio vitrine / mpv (<= 0.9 is the target).
source "$(dirname "$0")/common.sh"
seconds=${SECONDS_OF_VIDEO:-20}
build_vitrine
command -v mpv > /dev/null || { echo "mpv is missing: apt-get install mpv" >&2; exit 1; }
make_1080p play1080p.mp4 "$seconds"
clip=$work/play1080p.mp4
cat "$clip" > /dev/null
measure "$work/mpv.time" mpv --no-config --really-quiet --vo=null --ao=null "$clip"
measure "$work/vitrine-play.time" "$vitrine" play --display null "$clip"
read -r m_wall m_user m_sys m_rss < "$work/mpv.time"
read -r v_wall v_user v_sys v_rss < "$work/vitrine-play.time"
m_cpu=$(python3 -c "print(round($m_user+$m_sys,2))")
v_cpu=$(python3 -c "print(round($v_user+$v_sys,2))")
echo "play 1080p30 H.264/AAC ${seconds}s to null outputs"
echo "  mpv    : wall ${m_wall}s cpu ${m_cpu}s maxrss ${m_rss}kB"
echo "  vitrine: wall ${v_wall}s cpu ${v_cpu}s maxrss ${v_rss}kB"
echo "  cpu ratio (vitrine / mpv, target <= 0.9): $(ratio "$v_cpu" "$m_cpu")"
result "real-time playback CPU, 1080p30 to null outputs" "${v_cpu} s" "mpv ${m_cpu} s" "$(ratio "$v_cpu" "$m_cpu")" "<= 0.9"
