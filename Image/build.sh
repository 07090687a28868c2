#!/usr/bin/env bash
# Builds the Vitrine appliance: a raw GPT disk image that boots (UEFI, systemd-boot) straight into
# the schedule, made from Debian 12 packages with mmdebstrap and assembled without loop mounts.
#
#   partition 1  ESP, FAT32       systemd-boot, Debian's kernel and its initramfs
#   partition 2  root, erofs      read-only: the system, /usr/bin/vitrine, its units, /etc as built
#   partition 3  data, ext4       /var: bundles, the player's state, proof of play, the persistent
#                                 journal; grown to fill the disk on the first boot
#
# What is in it and why, how to flash it and how to configure a screen: Image/README.md.
#
# Usage: bash Image/build.sh [OPTIONS]
#   --output PATH              the image (default Image/out/vitrine.img)
#   --trusted-key FILE         a minisign public key whose bundles the screen accepts (repeatable)
#   --inspector-token FILE     turn the HTTP inspector on (0.0.0.0:8443) with this bearer token
#   --tls-certificate FILE     with --tls-key: the inspector speaks HTTPS (without them it listens
#   --tls-key FILE               on loopback only, where plain HTTP is allowed)
#   --bundle DIR               a folder laid out as a USB stick (DIR/vitrine/MANIFEST) imported at
#                              build time: the screen plays it from the first boot
#   --test                     the test variant (Image/boot-test.sh): a root shell on the second
#                              serial port and kernel messages on the first; never ship it
# Environment: VITRINE_BINARY (use this binary instead of building one), VITRINE_IMAGE_MIRROR
# (Debian mirror, default http://deb.debian.org/debian), SOURCE_DATE_EPOCH (default: the last
# commit's time; timestamps in the file systems).
#
# Idempotent: Debian's packages and the installed base system are cached in Image/cache/appliance/
# (rebuilt when the package list changes); a rerun only lays the player over the base and
# re-assembles the disk (about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
root_dir=$PWD
cache=$root_dir/Image/cache/appliance
say() { echo "image: $*" >&2; }
die() { say "error: $*"; exit 1; }

output=$root_dir/Image/out/vitrine.img
trusted_keys=() token="" tls_certificate="" tls_key="" bundle="" test_variant=0
while [ $# -gt 0 ]; do
    case "$1" in
        --output) output=$(realpath -m "$2"); shift 2 ;;
        --trusted-key) trusted_keys+=("$(realpath "$2")"); shift 2 ;;
        --inspector-token) token=$(realpath "$2"); shift 2 ;;
        --tls-certificate) tls_certificate=$(realpath "$2"); shift 2 ;;
        --tls-key) tls_key=$(realpath "$2"); shift 2 ;;
        --bundle) bundle=$(realpath "$2"); shift 2 ;;
        --test) test_variant=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
for file in "${trusted_keys[@]}" $token $tls_certificate $tls_key; do
    [ -r "$file" ] || die "cannot read $file"
done
if { [ -n "$tls_certificate" ] && [ -z "$tls_key" ]; } || { [ -z "$tls_certificate" ] && [ -n "$tls_key" ]; }; then
    die "--tls-certificate and --tls-key go together"
fi
{ [ -n "$tls_certificate" ] && [ -z "$token" ]; } && die "--tls-certificate needs --inspector-token (the inspector is off without one)"
[ -z "$bundle" ] || [ -r "$bundle/vitrine/MANIFEST" ] || die "$bundle holds no bundle (no vitrine/MANIFEST in it)"

for tool in mmdebstrap mkfs.erofs mkfs.vfat mcopy mmd mke2fs sfdisk systemctl; do
    command -v "$tool" >/dev/null || die "$tool is not installed (bash scripts/setup.sh installs it)"
done
[ "$(id -u)" = 0 ] || die "mmdebstrap installs packages as root here: run as root"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
mirror=${VITRINE_IMAGE_MIRROR:-http://deb.debian.org/debian}
started=$SECONDS

# --- The player (its C libraries come with the package list below).
source Image/binary.sh
[ -s Fixtures/generated/h264_aac.mp4 ] || bash scripts/fixtures.sh >/dev/null

# --- What the base system holds. Every package the binary's shared libraries come from (found on
# this machine, which built it), plus what playback loads at run time and what the appliance
# needs around it.
mapfile -t library_packages < <(ldd "$binary" | awk '$3 ~ /^\// {print $3}' | xargs -r readlink -f \
    | xargs -r dpkg -S 2>/dev/null | cut -d: -f1 | sort -u)
[ ${#library_packages[@]} -gt 10 ] || die "cannot tell which packages hold $binary's libraries (ldd, dpkg -S)"
system_packages=(
    systemd systemd-sysv udev dbus kmod        # PID 1, devices, module loading
    linux-image-amd64 initramfs-tools zstd     # Debian's kernel; its initramfs mounts the erofs root
    e2fsprogs                                  # fsck and online growing of the data partition
    libgl1-mesa-dri libegl-mesa0 libgbm1       # Mesa: kms_swrast/llvmpipe and the GPU drivers
    libasound2-data                            # alsa-lib's configuration (cards, dmix)
    fonts-dejavu-core                          # the overlays' default font
    tzdata                                     # schedules name time zones
    chrony                                     # the wall clock that places programmes
    systemd-resolved                           # DNS from DHCP, for chrony's pool and media URLs
    systemd-boot-efi                           # the boot loader, copied to the ESP
)
packages=$(printf '%s\n' "${system_packages[@]}" "${library_packages[@]}" | sort -u | paste -sd, -)
base=$cache/base
base_stamp=$(printf '%s\n' "base-1" "$mirror" "$packages" | sha256sum | cut -c1-16)

if [ ! -s "$base.stamp" ] || [ "$(cat "$base.stamp")" != "$base_stamp" ] || [ ! -x "$base/usr/bin/systemctl" ]; then
    say "installing the base system with mmdebstrap (Debian 12; the packages are cached in $cache/debs)"
    rm -rf "$base" "$base.stamp"
    mkdir -p "$cache/debs"
    mmdebstrap --variant=apt --mode=root --format=directory \
        --include="$packages" \
        --aptopt='APT::Install-Recommends "false"' \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-include=/usr/share/locale/locale.alias' \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/info/*' \
        --skip=download/empty \
        --setup-hook='mkdir -p "$1/var/cache/apt/archives" "$1/etc/initramfs-tools/hooks"' \
        --setup-hook="sync-in '$cache/debs' /var/cache/apt/archives/" \
        --setup-hook="copy-in '$root_dir/Image/rootfs/etc/initramfs-tools/hooks/vitrine-erofs' /etc/initramfs-tools/hooks/" \
        --customize-hook="sync-out /var/cache/apt/archives '$cache/debs'" \
        --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
        bookworm "$base" \
        "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
        "deb ${mirror%/debian}/debian-security bookworm-security main" >&2
    [ -x "$base/usr/bin/systemctl" ] || die "mmdebstrap did not install systemd"
    echo "$base_stamp" > "$base.stamp"
    say "base system installed ($((SECONDS - started)) s)"
fi
kernel=$(ls "$base"/boot/vmlinuz-* | sort -V | tail -1)
initrd=$base/boot/initrd.img-${kernel##*/vmlinuz-}
[ -s "$initrd" ] || die "the base system has no initramfs for $kernel"

# --- The appliance: the player, its units and settings laid over a copy of the base.
root=$cache/root
rm -rf "$root"
cp -a "$base" "$root"
cp -a Image/rootfs/. "$root/"
install -m 0755 "$binary" "$root/usr/bin/vitrine"
install -m 0644 systemd/vitrine.service systemd/vitrine-import@.service "$root/usr/lib/systemd/system/"
install -m 0644 systemd/90-vitrine-usb.rules "$root/usr/lib/udev/rules.d/"
mkdir -p "$root/usr/share/vitrine/demo/media" "$root/usr/share/doc/vitrine"
cp Fixtures/generated/h264_aac.mp4 Fixtures/generated/logo.png Fixtures/generated/cover.png "$root/usr/share/vitrine/demo/media/"
cp docs/bundles.md docs/inspector.md docs/configuration.md "$root/usr/share/doc/vitrine/"
# The operator's minisign keys' folder exists even when no key is given yet (git keeps no empty
# folders, so it is made here): a key can be added before first boot, as Image/README.md says.
install -d -m 0755 "$root/etc/vitrine/trusted-keys"
for key in "${trusted_keys[@]}"; do install -m 0644 "$key" "$root/etc/vitrine/trusted-keys/$(basename "$key" .pub).pub"; done

# The inspector: its secrets reach the service as systemd credentials (readable by the player's
# dynamic user only, under /run/credentials/vitrine.service/), so /etc keeps them root's.
if [ -n "$token" ]; then
    dropin=$root/etc/systemd/system/vitrine.service.d
    mkdir -p "$dropin"
    install -m 0600 "$token" "$root/etc/vitrine/inspector-token"
    credentials="LoadCredential=inspector-token:/etc/vitrine/inspector-token"
    listen="127.0.0.1:8443"
    tls=""
    if [ -n "$tls_certificate" ]; then
        install -m 0644 "$tls_certificate" "$root/etc/vitrine/inspector.crt"
        install -m 0600 "$tls_key" "$root/etc/vitrine/inspector.key"
        credentials+=$'\n'"LoadCredential=inspector.crt:/etc/vitrine/inspector.crt"
        credentials+=$'\n'"LoadCredential=inspector.key:/etc/vitrine/inspector.key"
        listen="0.0.0.0:8443"
        tls=$'tls_certificate = "/run/credentials/vitrine.service/inspector.crt"\ntls_key = "/run/credentials/vitrine.service/inspector.key"'
    fi
    printf '# Written by Image/build.sh: the inspector'"'"'s token and TLS files as credentials.\n[Service]\n%s\n' "$credentials" \
        > "$dropin/10-inspector.conf"
    printf '\n[inspector]\nlisten = "%s"\ntoken_file = "/run/credentials/vitrine.service/inspector-token"\n%s\n' "$listen" "$tls" \
        >> "$root/etc/vitrine/vitrine.toml"
fi
# Check what the screen will read: its configuration (with its paths moved under $root) and the demo.
sed "s|\"/usr/share/vitrine|\"$root/usr/share/vitrine|; s|\"/etc/vitrine|\"$root/etc/vitrine|" "$root/etc/vitrine/vitrine.toml" > "$cache/vitrine.toml"
"$binary" validate "$cache/vitrine.toml" >&2 || die "the image's configuration is not valid"

# Units: the player at boot, the network for the inspector, /tmp in memory; no login prompt on the
# screen (nor anywhere), no first-boot questions (/etc is read-only).
ln -sf /usr/share/systemd/tmp.mount "$root/etc/systemd/system/tmp.mount"
systemctl --root="$root" enable vitrine.service systemd-networkd.service systemd-resolved.service tmp.mount >/dev/null 2>&1
# Names are resolved by systemd-resolved with the DNS servers DHCP gives (never the build host's
# resolv.conf, which mmdebstrap leaves in the tree).
ln -sfn ../run/systemd/resolve/stub-resolv.conf "$root/etc/resolv.conf"
systemctl --root="$root" mask getty@.service serial-getty@.service autovt@.service console-getty.service \
    systemd-firstboot.service systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer \
    e2scrub_all.timer e2scrub_reap.service >/dev/null 2>&1
# Picture first: as little as possible runs before the player's first frame. No debugfs, tracefs,
# huge pages or POSIX message queues (logind stays: it turns the power button into an orderly
# shutdown). The player waits only for what it needs (systemd/README.md, "When it starts"), and
# the time service, the network, DNS, D-Bus and logind wait for its first frame, so that on a
# slow single CPU they do not share it with the player's start (ordering only: they start even if
# the player fails; a clock step chrony makes later is one the show already follows).
systemctl --root="$root" mask dev-hugepages.mount dev-mqueue.mount sys-kernel-debug.mount \
    sys-kernel-tracing.mount sys-fs-fuse-connections.mount >/dev/null 2>&1
# Debian's timers that would wake up during playback for nothing an appliance uses: apt's daily
# package-list download and upgrade (the root is read-only; updates are new images), dpkg's
# database backup, e2scrub (LVM snapshots; there is no LVM). fstrim and tmpfiles' clean-up stay.
idle_timers="apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer"
systemctl --root="$root" disable $idle_timers >/dev/null 2>&1
systemctl --root="$root" mask $idle_timers >/dev/null 2>&1
for unit in chrony.service systemd-networkd.service systemd-resolved.service systemd-logind.service dbus.service; do
    mkdir -p "$root/etc/systemd/system/$unit.d"
    printf '# Written by Image/build.sh: the picture comes first.\n[Unit]\nAfter=vitrine.service\n' \
        > "$root/etc/systemd/system/$unit.d/10-after-vitrine.conf"
done
echo vitrine > "$root/etc/hostname"
ln -sf /usr/share/zoneinfo/UTC "$root/etc/localtime"
# An empty machine-id on a read-only /etc: systemd makes a transient one at each boot.
: > "$root/etc/machine-id"

if [ "$test_variant" = 1 ]; then
    cat > "$root/etc/systemd/system/vitrine-test-console.service" <<'EOF'
# TEST VARIANT ONLY (Image/build.sh --test): a root shell on the second serial port, through which
# Image/boot-test.sh signals the player and reads what only root can. Never in a shipped image.
[Unit]
Description=Vitrine test console on ttyS1
DefaultDependencies=no
After=systemd-udevd.service dev-ttyS1.device
[Service]
ExecStart=/bin/sh -c 'exec /bin/sh -i </dev/ttyS1 >/dev/ttyS1 2>&1'
Restart=always
RestartSec=1
[Install]
WantedBy=sysinit.target
EOF
    systemctl --root="$root" enable vitrine-test-console.service >/dev/null 2>&1
    # The test watches the crash-loop guard, not reboots.
    mkdir -p "$root/etc/systemd/system/vitrine.service.d"
    printf '[Unit]\nStartLimitAction=none\n' > "$root/etc/systemd/system/vitrine.service.d/20-test.conf"
fi

# A bundle imported now plays from the first boot (the import the screen would do from a stick).
mkdir -p "$root/var/lib/vitrine/bundles" "$root/var/log/journal"
if [ -n "$bundle" ]; then
    keys_option=()
    [ ${#trusted_keys[@]} -gt 0 ] && keys_option=(--keys "$root/etc/vitrine/trusted-keys")
    "$binary" import "$bundle" --directory "$root/var/lib/vitrine/bundles" "${keys_option[@]}" >&2 \
        || die "the bundle $bundle was not imported"
fi

# --- The file systems, each made from a folder (no loop devices, no mounts).
work=$cache/assemble
rm -rf "$work" && mkdir -p "$work"
say "making the file systems"
# Data: everything under /var, with room to spare until the first boot grows it.
mke2fs -q -t ext4 -L vitrine-data -U 6b1b1e0c-7a1e-4a8f-9d0e-d47a0000d47a -E root_owner=0:0 \
    -d "$root/var" "$work/data.ext4" 512M >/dev/null
# ESP: systemd-boot, the kernel and its initramfs; no menu, no wait.
esp_mb=$(( ( $(stat -c %s "$kernel") + $(stat -c %s "$initrd") ) / 1048576 + 32 ))
mkfs.vfat -F 32 -n VITRINE-ESP --invariant -C "$work/esp.vfat" $((esp_mb * 1024)) >/dev/null
mmd -i "$work/esp.vfat" ::/EFI ::/EFI/BOOT ::/loader ::/loader/entries ::/vitrine
mcopy -i "$work/esp.vfat" "$root/usr/lib/systemd/boot/efi/systemd-bootx64.efi" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$work/esp.vfat" "$kernel" ::/vitrine/vmlinuz
mcopy -i "$work/esp.vfat" "$initrd" ::/vitrine/initrd.img
root_partuuid=0e5a1c3d-7b2f-4c8e-9a61-7f1e0000c0de
cmdline="root=PARTUUID=$root_partuuid rootfstype=erofs ro quiet loglevel=3 systemd.show_status=false rd.udev.log_level=3 udev.log_level=3 vt.global_cursor_default=0"
[ "$test_variant" = 1 ] && cmdline+=" console=ttyS0,115200"
printf 'timeout 0\neditor no\nauto-entries no\nauto-firmware no\ndefault vitrine.conf\n' > "$work/loader.conf"
printf 'title Vitrine\nlinux /vitrine/vmlinuz\ninitrd /vitrine/initrd.img\noptions %s\n' "$cmdline" > "$work/vitrine.conf"
mcopy -i "$work/esp.vfat" "$work/loader.conf" ::/loader/loader.conf
mcopy -i "$work/esp.vfat" "$work/vitrine.conf" ::/loader/entries/vitrine.conf
# Root: erofs, LZ4HC-compressed (cheap to read, even under emulation), /var and /boot empty (the
# data partition and the ESP hold them).
mkfs.erofs -zlz4hc -T "$SOURCE_DATE_EPOCH" -U 0e5a1c3d-7b2f-4c8e-9a61-7f1e00000e20 \
    --exclude-regex='^var/.+' --exclude-regex='^boot/.+' --exclude-regex='^tmp/.+' \
    "$work/root.erofs" "$root" >/dev/null

# --- The disk: GPT with fixed identifiers, each file system written at its partition's offset.
mib=1048576
size_mib() { echo $(( ( $(stat -c %s "$1") + mib - 1 ) / mib )); }
esp_size=$(size_mib "$work/esp.vfat") root_size=$(( $(size_mib "$work/root.erofs") + 16 )) data_size=$(size_mib "$work/data.ext4")
total=$(( 1 + esp_size + root_size + data_size + 1 ))
mkdir -p "$(dirname "$output")"
rm -f "$output.partial"
truncate -s "${total}M" "$output.partial"
sfdisk -q --no-reread --no-tell-kernel "$output.partial" <<EOF
label: gpt
label-id: 5C0E2D1A-0B7E-4E55-8D7A-00000000C0DE
unit: sectors
first-lba: 2048
start=2048, size=$((esp_size * 2048)), type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=0E5A1C3D-7B2F-4C8E-9A61-7F1E0000E5F1, name=vitrine-esp
size=$((root_size * 2048)), type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$root_partuuid, name=vitrine-root
size=$((data_size * 2048)), type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, uuid=0E5A1C3D-7B2F-4C8E-9A61-7F1E0000DA7A, name=vitrine-data
EOF
dd if="$work/esp.vfat" of="$output.partial" bs=1M seek=1 conv=notrunc,sparse status=none
dd if="$work/root.erofs" of="$output.partial" bs=1M seek=$((1 + esp_size)) conv=notrunc,sparse status=none
dd if="$work/data.ext4" of="$output.partial" bs=1M seek=$((1 + esp_size + root_size)) conv=notrunc,sparse status=none
mv "$output.partial" "$output"
command -v bmaptool >/dev/null && bmaptool create -o "${output%.img}.bmap" "$output" 2>/dev/null || true
rm -rf "$work"
say "wrote $output: $(du -h --apparent-size "$output" | cut -f1) (ESP ${esp_size} MiB, root ${root_size} MiB erofs, data ${data_size} MiB ext4) in $((SECONDS - started)) s"
