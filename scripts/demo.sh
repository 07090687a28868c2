#!/usr/bin/env bash
# Sets up the machine, builds Vitrine and runs the demo: probes and thumbnails the demo clip,
# writing what it shows under out/demo/ (PNG files to look at).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
bash scripts/fixtures.sh

swift build -c release --product vitrine
vitrine=$(swift build -c release --show-bin-path)/vitrine
clip=Fixtures/generated/h264_aac.mp4
out=out/demo
rm -rf "$out" && mkdir -p "$out"

"$vitrine" probe "$clip"
"$vitrine" thumbnails "$clip" --count 4 --max-width 320 --out "$out"
echo
echo "demo: thumbnails of $clip are in $out/:"
ls -1 "$out"
