#!/usr/bin/env bash
# Installs everything Vitrine's build, tests, demo and benchmarks need on Debian 12.
# Idempotent: it installs only what is missing, so a second run takes a second.
# Run as root (or with sudo available).
set -euo pipefail

packages=(
    # Build: C libraries behind the system-library targets.
    pkg-config
    libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libavfilter-dev
    libdrm-dev libgbm-dev libegl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri
    libasound2-dev libasound2-plugins
    libfreetype-dev fonts-dejavu-core
    libsodium-dev
    libsystemd-dev
    # Tests: reference tools and devices.
    ffmpeg python3 python3-pip
    pulseaudio pulseaudio-utils
    # The VM sync test's capture of the loopback card (arecord).
    alsa-utils
    # Signing and checking schedule bundles as operators do.
    minisign
    # The inspector's tests: an HTTP client, certificates, the Prometheus linter.
    curl openssl prometheus
    # The status page's test in a real browser.
    chromium chromium-driver
    # The service unit's checks (systemd-analyze verify and security).
    systemd
    # Journal files for the journal reader's tests, made without a running journald.
    systemd-journal-remote
    # The KMS proof in a VM.
    qemu-system-x86 qemu-utils debootstrap socat busybox-static e2fsprogs xz-utils cpio kmod
    # USB stick images for the VM import test (built without mounting).
    dosfstools mtools exfatprogs
    # The appliance image (Image/build.sh) and its boot test: Debian's bootstrapper, the read-only
    # root's and the partition table's tools, UEFI firmware for QEMU.
    mmdebstrap erofs-utils fdisk bmap-tools ovmf
    # Benchmarks (gnuplot draws the soak's plot; ffplay comes with ffmpeg; perf profiles decoding).
    mpv hyperfine time gnuplot-nox linux-perf
)

sudo_if_needed() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    sudo_if_needed apt-get update -qq
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# python-dateutil checks the schedule resolver's recurrence expansion.
if ! python3 -c 'import dateutil.rrule' 2>/dev/null; then
    python3 -m pip install --quiet python-dateutil 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages python-dateutil
fi

# selenium drives chromium for the inspector's status page test.
if ! python3 -c 'import selenium' 2>/dev/null; then
    python3 -m pip install --quiet selenium 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages selenium
fi

# numpy compares screendumps and audio captures in the appliance's boot test.
if ! python3 -c 'import numpy' 2>/dev/null; then
    python3 -m pip install --quiet numpy 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages numpy
fi

if ! command -v swift >/dev/null 2>&1; then
    for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        [ -x "$candidate/swift" ] && export PATH="$candidate:$PATH"
    done
fi
if ! command -v swift >/dev/null 2>&1; then
    echo "setup: Swift 6.1 or later is needed and is not on PATH." >&2
    echo "setup: install the toolchain for Debian 12 from swift.org into /opt/swift, then run this again." >&2
    exit 1
fi
