#!/usr/bin/env bash
# The whole Swift suite under ThreadSanitizer (its own build folder, .build-tsan). Fails when a test
# fails or TSan reports anything: a data race, a lock-order inversion, a race on a Swift variable.
# ./scripts/test.sh runs it; alone it takes ~2 min to build and ~4 min to run on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
bash scripts/fixtures.sh >/dev/null
swift build --build-tests --sanitize=thread --scratch-path .build-tsan 2>&1 | grep -E "error:|Compiling|Build complete" | tail -3
log=.build-tsan/tsan-test.log
set +e
# VITRINE_SANITIZER tells the tests that measure real-time behaviour (frames dropped under load,
# memory growth) that their figures mean nothing here: they are skipped, everything else runs.
VITRINE_SANITIZER=thread TSAN_OPTIONS="${TSAN_OPTIONS:-} halt_on_error=0 second_deadlock_stack=1" \
    swift test --skip-build --sanitize=thread --scratch-path .build-tsan --no-parallel > "$log" 2>&1
status=$?
set -e
reports=$(grep -c "WARNING: ThreadSanitizer" "$log" || true)
grep -E "✘|Test run with" "$log" | tail -20
if [ "$reports" -gt 0 ]; then
    grep -A30 "WARNING: ThreadSanitizer" "$log" | head -120 >&2
    echo "tsan: $reports ThreadSanitizer report(s); the whole log is in $log" >&2
    exit 1
fi
[ "$status" -eq 0 ] || { echo "tsan: the suite failed under ThreadSanitizer (log: $log)" >&2; exit 1; }
echo "tsan: the suite passed under ThreadSanitizer with no report"
