#!/usr/bin/env bash
# The appliance image, proven in QEMU the way an operator meets it: power on, picture, sound, the
# inspector, crashes, a hung player, USB sticks and power cuts, checked from outside the guest.
#
# Builds the test variant of the image (Image/build.sh --test: the product plus a root shell on the
# second serial port, an inspector token, a TLS certificate and an operator key made here), boots a
# copy of it grown to 3 GiB under QEMU TCG (two emulated CPUs) with OVMF (UEFI), virtio-vga, an
# emulated Intel HDA card captured to a WAV file, user networking with the inspector's port
# forwarded to the host, an xHCI controller for USB sticks and an i6300esb hardware watchdog, then
# (Image/boot_test.py):
#   a  power-on -> the demo's first frame on the screendump, in seconds, with its PSNR against the
#      frame `vitrine thumbnails --exact` gives for that moment of the programme
#   b  the sound captured from the emulated card is the demo's soundtrack as FFmpeg decodes it, at
#      the item's volume: 0.2 s windows, each compared at the speed it plays (the player eases
#      wall-clock errors out by resampling up to 0.5 %); a failure while the host kept the
#      emulated CPUs waiting over 15 % of the time is measured again on later stretches (three
#      attempts), then reported NOT MEASURED, not failed
#   c  the inspector (HTTPS, token) says the demo plays; its journal endpoint has this boot's lines
#   h  systemd-analyze security vitrine.service <= 2.0 inside the guest; the critical chain printed;
#      inside the unit's sandbox the decoding threads 5 nice steps below the render thread, and no
#      "Failed to set thread priority" line in the journal
#   d  kill -9 of the player -> systemd restarts it -> the picture is back at the programme's position
#   e  SIGSTOP -> no watchdog ping -> systemd kills and restarts it -> picture back
#   f  a FAT32 stick with a signed bundle plugged in -> its schedule on screen; a stick with a bad
#      signature -> refused, the imported content goes on
#   g  QEMU quits (no shutdown) in the middle of an import, and again during playback -> each next
#      boot plays the last complete bundle, fsck finds the data partition clean
# Usage: bash Image/boot-test.sh       Environment: VITRINE_BINARY, VITRINE_BOOT_TIMEOUT (s, default
# 600: the deadline of each wait for the guest), VITRINE_BOOT_CPUS (emulated CPUs, default 2).
# Exit status: 0 passed, 1 a check failed, 77 skipped (no QEMU, OVMF or mmdebstrap).
set -euo pipefail
cd "$(dirname "$0")/.."
root_dir=$PWD
say() { echo "boot-test: $*" >&2; }
skip() { say "SKIPPED: $*"; exit 77; }

for tool in qemu-system-x86_64 mmdebstrap mkfs.erofs minisign openssl mkfs.vfat mcopy ffmpeg python3; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh installs it)"
done
ovmf_code=/usr/share/OVMF/OVMF_CODE_4M.fd ovmf_vars=/usr/share/OVMF/OVMF_VARS_4M.fd
[ -r "$ovmf_code" ] && [ -r "$ovmf_vars" ] || skip "OVMF (UEFI firmware for QEMU) is not installed: apt-get install ovmf"
python3 -c 'import numpy' 2>/dev/null || skip "python3's numpy is missing (scripts/setup.sh installs it)"
[ "$(id -u)" = 0 ] || skip "building the image with mmdebstrap needs root"

cache=$root_dir/Image/cache/boot-test
work=$cache/run
mkdir -p "$cache" && rm -rf "$work" && mkdir -p "$work"
started=$SECONDS

source Image/binary.sh
[ -s Fixtures/generated/h264_aac.mp4 ] || bash scripts/fixtures.sh >/dev/null

# --- The operator's secrets for the test variant: a minisign key pair, the inspector's token and a
# certificate for 127.0.0.1 (the forwarded port), made once.
keys=$cache/keys
if [ ! -s "$keys/operator.pub" ] || [ ! -s "$keys/inspector.crt" ]; then
    rm -rf "$keys" && mkdir -p "$keys"
    minisign -G -W -p "$keys/operator.pub" -s "$keys/operator.key" >/dev/null
    minisign -G -W -p "$keys/stranger.pub" -s "$keys/stranger.key" >/dev/null
    head -c 24 /dev/urandom | base64 > "$keys/token" && chmod 600 "$keys/token"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 -subj /CN=vitrine \
        -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout "$keys/inspector.key" -out "$keys/inspector.crt" 2>/dev/null
fi

# --- USB sticks (FAT32, made without mounting): a signed bundle playing a blue picture; the same
# signed by a key the screen does not trust; a big signed bundle (green) to cut the power during.
make_stick() {  # make_stick NAME COLOUR SIGNING_KEY PADDING_MB
    local name=$1 colour=$2 key=$3 padding=$4 folder=$cache/sticks/$1
    [ -s "$cache/sticks/$name.img" ] && return
    rm -rf "$folder" && mkdir -p "$folder/vitrine/media"
    ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "color=c=$colour:size=320x180:rate=5" -t 4 \
        -c:v libx264 -preset veryfast -pix_fmt yuv420p -threads 1 "$folder/vitrine/media/picture.mp4"
    printf 'version = 1\nfallback = "loop"\n[[playlists.loop.items]]\nvideo = "media/picture.mp4"\n' > "$folder/vitrine/schedule.toml"
    [ "$padding" -gt 0 ] && head -c "${padding}M" /dev/urandom > "$folder/vitrine/media/padding.bin"
    "$binary" bundle create "$folder/vitrine" >/dev/null 2>"$folder.log" || { cat "$folder.log" >&2; exit 1; }
    minisign -S -s "$key" -m "$folder/vitrine/MANIFEST" >/dev/null
    local size=$(( padding + 64 ))
    mkfs.vfat -F 32 -n "${name^^}" -C "$cache/sticks/$name.img.partial" $((size * 1024)) >/dev/null
    mcopy -i "$cache/sticks/$name.img.partial" -s "$folder/vitrine" ::/
    mv "$cache/sticks/$name.img.partial" "$cache/sticks/$name.img"
}
mkdir -p "$cache/sticks"
make_stick good 0x0080FF "$keys/operator.key" 0
make_stick bad 0xFF0000 "$keys/stranger.key" 0
make_stick big 0x00FF00 "$keys/operator.key" 400

# --- The image (its base system is cached; see Image/build.sh).
image=$root_dir/Image/out/vitrine-test.img
VITRINE_BINARY=$binary bash Image/build.sh --test --output "$image" --trusted-key "$keys/operator.pub" \
    --inspector-token "$keys/token" --tls-certificate "$keys/inspector.crt" --tls-key "$keys/inspector.key"
say "image ready after $((SECONDS - started)) s"

# A copy of the image on a bigger disk (the first boot grows the data partition into it), with
# its own UEFI variables.
cp --sparse=always "$image" "$work/disk.img"
truncate -s 3G "$work/disk.img"
cp "$ovmf_vars" "$work/vars.fd"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

status=0
python3 Image/boot_test.py --work "$work" --disk "$work/disk.img" --ovmf-code "$ovmf_code" --ovmf-vars "$work/vars.fd" \
    --vitrine "$binary" --schedule "$root_dir/Image/cache/appliance/root/usr/share/vitrine/demo/demo.toml" --port "$port" \
    --token "$keys/token" --certificate "$keys/inspector.crt" \
    --good-stick "$cache/sticks/good.img" --bad-stick "$cache/sticks/bad.img" --big-stick "$cache/sticks/big.img" || status=$?
say "done in $((SECONDS - started)) s"
exit $status
