#!/usr/bin/env bash
# Compositor throughput, headless (EGL surfaceless, llvmpipe on a machine without a GPU), each frame
# uploaded, drawn and finished:
#   1. a 1080p YUV420P video layer plus one image and one text overlay (the single-video figure);
#   2. a signage layout in player layers: a 1920x1080 video in a 1440x810 main zone, two 854x480
#      videos in 480x405 side zones, a ticker moved at every refresh; every zone gets a new frame at
#      every refresh (the worst case: real 25/30 fps videos on a 60 Hz screen bring one every other).
# Prints frames per second beside the 30 fps signage needs (the goal for the single video is 2x).
#
#   bash Benchmarks/composite.sh [FRAMES]
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
frames=${1:-300}
build_vitrine   # the same release binary as every other benchmark (a differently-flagged build here rebuilt it all)
bin=$vitrine
echo "machine: $(nproc) cores; renderer: $(LP_DEBUG= eglinfo -p surfaceless 2>/dev/null | grep -m1 'OpenGL ES profile renderer' | sed 's/.*: //' || echo unknown)"
single=$("$bin" bench composite --frames "$frames" --required 30)
echo "$single"
zones=$("$bin" bench composite --zones --frames "$frames" --required 30)
echo "$zones"
fps=$(sed -n 's/.* fps=\([0-9.]*\).*/\1/p' <<<"$single")
zones_fps=$(sed -n 's/.* fps=\([0-9.]*\).*/\1/p' <<<"$zones")
awk -v fps="$fps" -v zones="$zones_fps" 'BEGIN {
    printf "vitrine composite: single video %.1f fps, zones %.1f fps   required: 30 fps   ratios: %.2fx (goal >= 2x), %.2fx (goal >= 1x)\n", fps, zones, fps / 30, zones / 30
}'
result "compositing, 1080p video + 2 overlays (fps / 30)" "$fps fps" "30 fps required" "$(ratio "$fps" 30)" ">= 2.0"
result "compositing, 1080p + 2x 480p zones + ticker (fps / 30)" "$zones_fps fps" "30 fps required" "$(ratio "$zones_fps" 30)" ">= 1.0"
awk -v fps="$fps" -v zones="$zones_fps" 'BEGIN { exit (fps >= 30 && zones >= 30 ? 0 : 1) }'
