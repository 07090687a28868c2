#!/usr/bin/env bash
# Playback cost: `vitrine play` of a 1080p30 H.264/AAC clip to the null video and audio sinks
# against `mpv --no-config --vo=null --ao=null`, both in real time. Prints CPU-seconds (user+sys)
# and the ratio vitrine / mpv (<= 0.9 is the target). RUNS (3) pairs, the players alternating;
# the row is the ratio of the medians: one pair alone moved by ±10 % from run to run on a shared
# 2-core machine (0.80 to 0.93 for the same build), more than the margin to the target.
source "$(dirname "$0")/common.sh"
seconds=${SECONDS_OF_VIDEO:-20}
runs=${RUNS:-3}
build_vitrine
command -v mpv > /dev/null || { echo "mpv is missing: apt-get install mpv" >&2; exit 1; }
make_1080p play1080p.mp4 "$seconds"
clip=$work/play1080p.mp4
cat "$clip" > /dev/null
cpu() { read -r _ user sys _ < "$1"; python3 -c "print(round($user+$sys,2))"; }
m_cpus=() v_cpus=()
echo "play 1080p30 H.264/AAC ${seconds}s to null outputs, $runs pairs"
for run in $(seq "$runs"); do
    measure "$work/mpv.time" mpv --no-config --really-quiet --vo=null --ao=null "$clip"
    measure "$work/vitrine-play.time" "$vitrine" play --display null "$clip"
    m_cpus+=("$(cpu "$work/mpv.time")")
    v_cpus+=("$(cpu "$work/vitrine-play.time")")
    read -r _ _ _ m_rss < "$work/mpv.time"
    read -r _ _ _ v_rss < "$work/vitrine-play.time"
    echo "  pair $run: mpv cpu ${m_cpus[-1]}s maxrss ${m_rss}kB, vitrine cpu ${v_cpus[-1]}s maxrss ${v_rss}kB," \
         "ratio $(ratio "${v_cpus[-1]}" "${m_cpus[-1]}")"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m_cpu=$(median "${m_cpus[@]}")
v_cpu=$(median "${v_cpus[@]}")
echo "  medians: mpv ${m_cpu}s, vitrine ${v_cpu}s; cpu ratio (vitrine / mpv, target <= 0.9): $(ratio "$v_cpu" "$m_cpu")"
result "real-time playback CPU, 1080p30 to null outputs" "${v_cpu} s" "mpv ${m_cpu} s" "$(ratio "$v_cpu" "$m_cpu")" "<= 0.9"
