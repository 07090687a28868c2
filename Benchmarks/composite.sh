#!/usr/bin/env bash
# Compositor throughput: a 1080p YUV420P video layer plus one image and one text overlay, composited
# headless (EGL surfaceless, llvmpipe on a machine without a GPU), each frame uploaded, drawn and
# finished. Prints frames per second beside the 30 fps signage needs (the goal is at least 2x).
#
#   bash Benchmarks/composite.sh [FRAMES]
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
frames=${1:-300}
build_vitrine   # the same release binary as every other benchmark (a differently-flagged build here rebuilt it all)
bin=$vitrine
echo "machine: $(nproc) cores; renderer: $(LP_DEBUG= eglinfo -p surfaceless 2>/dev/null | grep -m1 'OpenGL ES profile renderer' | sed 's/.*: //' || echo unknown)"
line=$("$bin" bench composite --frames "$frames" --required 30)
echo "$line"
fps=$(sed -n 's/.* fps=\([0-9.]*\).*/\1/p' <<<"$line")
result "compositing, 1080p video + 2 overlays (fps / 30)" "$fps fps" "30 fps required" "$(ratio "$fps" 30)" ">= 2.0"
awk -v fps="$fps" 'BEGIN {
    printf "vitrine composite: %.1f fps   required: 30 fps   ratio: %.2fx (goal >= 2x)\n", fps, fps / 30
    exit (fps >= 30 ? 0 : 1)
}'
