#!/usr/bin/env bash
# The shipping build of vitrine, the one binary the demo, the benchmarks and the appliance image
# use: release, with Swift's runtime linked in (--static-swift-stdlib), so that it needs only
# Debian's C libraries and starts ~15 % faster than a build on Swift's shared libraries (fewer
# libraries for the dynamic linker). The package manager rebuilds only what changed.
# Prints the binary's path on standard output; the build's own output goes to standard error.
#
#   vitrine=$(bash scripts/release-build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=(swift build -c release --static-swift-stdlib)
"${build[@]}" --product vitrine >&2
echo "$("${build[@]}" --show-bin-path)/vitrine"
