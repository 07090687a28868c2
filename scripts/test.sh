#!/usr/bin/env bash
# Sets up the machine and runs Vitrine's whole test suite: the Swift tests (real FFmpeg,
# EGL, ALSA) and the script-level tests (CLI, VM proof when QEMU can run it).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

mkdir -p .build
# Our own sources must build without warnings (dependencies' warnings are theirs).
swift build --build-tests 2>&1 | tee .build/build.log | grep -E 'error:|warning:' || true
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "test: the build failed" >&2; exit 1; }
if grep -E "^$PWD/(Sources|Tests)/.*warning:" .build/build.log; then
    echo "test: the build has warnings (Swift 6, no warnings allowed)" >&2
    exit 1
fi

bash scripts/fixtures.sh

# Every step below runs even when one before it failed, so one run tells which pass: a real-time
# test that fails on a busy host does not hide whether the fuzzing, the unit checks, ThreadSanitizer,
# the VM proof and the boot test pass. The verdict, one line per step, comes at the end.
results=()
failed=0
step() {
    local name=$1; shift
    local status
    echo "test: === $name ==="
    set +e
    "$@"
    status=$?
    set -e
    case $status in
        0) results+=("passed   $name") ;;
        77) results+=("SKIPPED  $name (the reason is printed above)") ;;
        *) results+=("FAILED   $name (exit $status)"); failed=1 ;;
    esac
}

# One test at a time: the suites drive real-time devices (ALSA, PulseAudio, EGL render threads)
# and count the process's threads; on 2 cores, running them side by side measures the
# scheduler, not Vitrine.
step "Swift suite" swift test --skip-build --no-parallel

# Coverage-guided fuzzing (Fuzz/, docs/fuzzing.md): every input that ever failed, once, then
# about a minute per target. Exits 77 with a SKIPPED line where the toolchain has no libFuzzer.
fuzz() { bash Fuzz/run.sh --regressions && bash Fuzz/run.sh 60; }
step "fuzzing" fuzz

# The service unit: systemd-analyze verify, and an exposure of at most 2.0 in systemd-analyze security.
step "systemd unit checks" env VITRINE_BINARY="$PWD/.build/debug/vitrine" bash systemd/check-units.sh

# The appliance's configuration files, with systemd's tools (Image/check-rootfs.sh).
step "appliance configuration checks" bash Image/check-rootfs.sh

# The whole suite again under ThreadSanitizer: no data race, no lock-order inversion.
step "ThreadSanitizer suite" bash scripts/tsan.sh

# The KMS display, proven in a QEMU VM (says SKIPPED and exits 77 where QEMU cannot run it).
step "VM KMS proof" bash Image/vm-kms-test.sh

# The appliance: the disk image built from Debian packages (Image/build.sh), booted in QEMU with
# UEFI and checked from outside (says SKIPPED and exits 77 where it cannot run).
step "appliance boot test" bash Image/boot-test.sh

echo "test: summary"
for line in "${results[@]}"; do echo "test:   $line"; done
if [ "$failed" -ne 0 ]; then
    echo "test: FAILED (the steps marked FAILED above; each step's output follows its '=== name ===' line above)" >&2
    exit 1
fi
echo "test: all steps passed or were skipped with a reason"
