# Sourced by the Image/ scripts: the vitrine binary they put in a guest, in $binary.
# VITRINE_BINARY names one; otherwise the release build with Swift's runtime linked in (it then
# needs only Debian's C libraries), built here if it is out of date.
if [ -n "${VITRINE_BINARY:-}" ]; then
    binary=$VITRINE_BINARY
else
    echo "building vitrine (release, --static-swift-stdlib: scripts/release-build.sh)" >&2
    binary=$(bash "$(dirname "${BASH_SOURCE[0]}")/../scripts/release-build.sh")
fi
if [ ! -x "$binary" ]; then
    echo "no vitrine binary at $binary" >&2
    exit 1
fi
