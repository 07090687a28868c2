#!/usr/bin/env bash
# Generates the test media with the ffmpeg CLI into Fixtures/generated/ (git-ignored).
# Idempotent: a file is made only when it is missing. Deterministic encoder settings
# (-bitexact, fixed seeds, single thread) so every machine gets the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=Fixtures/generated
mkdir -p "$out"

ff() { ffmpeg -hide_banner -loglevel error -nostdin -y "$@"; }
make_once() {  # make_once NAME command...
    local name=$1; shift
    [ -s "$out/$name" ] && return 0
    "$@" || { rm -f "$out/$name"; echo "fixtures: could not make $name" >&2; return 1; }
}
x264=(-c:v libx264 -preset veryfast -pix_fmt yuv420p -threads 1 -bitexact)

# H.264/AAC in MP4: 10 s, 25 fps = 250 frames, a 440 Hz tone; the engine's frame-exact clip.
make_once h264_aac.mp4 ff -f lavfi -i testsrc2=size=320x240:rate=25:duration=10 \
    -f lavfi -i sine=frequency=440:sample_rate=48000:duration=10 \
    "${x264[@]}" -g 25 -c:a aac -b:a 64k -ac 2 -metadata title="Vitrine test pattern" "$out/h264_aac.mp4"
# HEVC in Matroska.
make_once hevc.mkv ff -f lavfi -i testsrc=size=320x240:rate=25:duration=3 \
    -c:v libx265 -preset ultrafast -x265-params log-level=error:pools=1:frame-threads=1 -pix_fmt yuv420p \
    "$out/hevc.mkv"
# VP9/Opus in WebM.
make_once vp9_opus.webm ff -f lavfi -i smptebars=size=320x240:rate=25:duration=3 \
    -f lavfi -i sine=frequency=660:sample_rate=48000:duration=3 \
    -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 300k -threads 1 -c:a libopus -b:a 48k "$out/vp9_opus.webm"
# MPEG-2 video and MP2 audio in MPEG-TS.
make_once mpeg2.ts ff -f lavfi -i testsrc=size=352x288:rate=25:duration=3 \
    -f lavfi -i sine=frequency=330:sample_rate=48000:duration=3 \
    -c:v mpeg2video -q:v 4 -c:a mp2 -b:a 128k "$out/mpeg2.ts"
# A phone clip held sideways: display matrix rotated 90 degrees.
# (Encoding drops the tag, so it is set on a stream copy.)
if [ ! -s "$out/rotated.mp4" ]; then
    ff -f lavfi -i testsrc2=size=320x180:rate=30:duration=2 "${x264[@]}" "$out/unrotated.mp4"
    ff -i "$out/unrotated.mp4" -c copy -metadata:s:v:0 rotate=90 "$out/rotated.mp4"
    rm -f "$out/unrotated.mp4"
fi
# NTSC rate: 30000/1001 fps.
make_once ntsc.mp4 ff -f lavfi -i testsrc2=size=320x240:rate=30000/1001:duration=3 \
    "${x264[@]}" "$out/ntsc.mp4"
# Two audio languages and two subtitle languages.
printf '1\n00:00:00,500 --> 00:00:02,000\nHello\n\n2\n00:00:02,500 --> 00:00:04,000\nGoodbye\n' > "$out/en.srt"
printf '1\n00:00:00,500 --> 00:00:02,000\nHallo\n\n2\n00:00:02,500 --> 00:00:04,000\nTschuess\n' > "$out/de.srt"
make_once multilang.mkv ff -f lavfi -i testsrc2=size=320x240:rate=25:duration=4 \
    -f lavfi -i sine=frequency=440:sample_rate=48000:duration=4 \
    -f lavfi -i sine=frequency=880:sample_rate=48000:duration=4 \
    -i "$out/en.srt" -i "$out/de.srt" \
    -map 0:v -map 1:a -map 2:a -map 3:s -map 4:s "${x264[@]}" -c:a aac -b:a 48k -c:s srt \
    -metadata:s:a:0 language=eng -metadata:s:a:0 title="English" \
    -metadata:s:a:1 language=ger -metadata:s:a:1 title="Deutsch" \
    -metadata:s:s:0 language=eng -metadata:s:s:1 language=ger "$out/multilang.mkv"
# Tagged audio with artwork: title, artist, album, date, comment and a cover picture.
make_once cover.png ff -f lavfi -i color=c=orange:size=64x64 -frames:v 1 "$out/cover.png"
make_once tagged.m4a ff -f lavfi -i sine=frequency=523:sample_rate=44100:duration=2 -i "$out/cover.png" \
    -map 0:a -map 1:v -c:a aac -b:a 64k -c:v png -disposition:v:0 attached_pic \
    -metadata title="Morning Loop" -metadata artist="Vitrine Band" -metadata album="Signage Hits" \
    -metadata date="2024-05-17" -metadata comment="Played at opening time" "$out/tagged.m4a"
# Three short, distinct clips for gapless queues (2 s each at 25 fps, no audio).
for spec in "red:queue1" "green:queue2" "blue:queue3"; do
    colour=${spec%%:*}; name=${spec##*:}
    make_once "$name.mp4" ff -f lavfi -i "testsrc2=size=320x240:rate=25:duration=2" \
        -vf "drawbox=x=0:y=0:w=80:h=60:color=$colour:t=fill" "${x264[@]}" -g 25 "$out/$name.mp4"
done
# A still image for overlays and image items.
make_once logo.png ff -f lavfi -i "testsrc2=size=200x100:rate=1" -frames:v 1 "$out/logo.png"
# Synchronised screens: 70 s at 25 fps with seeded pink noise (no period, so two captures line
# up at one lag only), long enough for a clock step to be eased out within one item.
make_once sync.mp4 ff -f lavfi -i testsrc2=size=320x240:rate=25:duration=70 \
    -f lavfi -i "anoisesrc=color=pink:seed=7:amplitude=0.3:sample_rate=48000:duration=70" \
    "${x264[@]}" -g 25 -c:a aac -b:a 128k -ac 2 "$out/sync.mp4"

# The accelerated soak's media (Tests/ShowRunnerTests/AcceleratedSoakTests.swift): a day of
# programme decodes in a minute or two. Tiny (160x90), 2 fps, a keyframe every second; the top
# half of every picture is one solid colour per clip, so a screenshot says which clip is on
# screen (and that it is not black), the bottom half moves. Two carry a sound track.
for spec in "red:soak1:6:" "green:soak2:8:tone" "blue:soak3:10:" "yellow:soak-alert:4:tone"; do
    IFS=: read -r colour name seconds sound <<< "$spec"
    audio=()
    [ -n "$sound" ] && audio=(-f lavfi -i "sine=frequency=550:sample_rate=48000:duration=$seconds" -c:a aac -b:a 32k -ac 1)
    make_once "$name.mp4" ff -f lavfi -i "testsrc2=size=160x90:rate=2:duration=$seconds" "${audio[@]}" \
        -vf "drawbox=x=0:y=0:w=160:h=45:color=$colour:t=fill" "${x264[@]}" -g 2 "$out/$name.mp4"
done
make_once soak-still.png ff -f lavfi -i color=c=magenta:size=160x90 -frames:v 1 "$out/soak-still.png"

# Video whose audio track no decoder knows: it must play video-only with a warning. Written as
# H.264 + AAC in Matroska, then the audio CodecID "A_AAC" is renamed (same length).
if [ ! -s "$out/undecodable_audio.mkv" ]; then
    ff -i "$out/h264_aac.mp4" -t 4 -c copy "$out/aac.mkv"
    python3 - "$out/aac.mkv" "$out/undecodable_audio.mkv" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
assert data.count(b"A_AAC") == 1
open(sys.argv[2], "wb").write(data.replace(b"A_AAC", b"A_VTR"))
PY
    rm -f "$out/aac.mkv"
fi

# Bad input: each must end in a clear error, never a crash or hang.
bad=$out/bad
mkdir -p "$bad"
: > "$bad/empty.mp4"
[ -s "$bad/truncated.mp4" ] || head -c 20000 "$out/h264_aac.mp4" > "$bad/truncated.mp4"
if [ ! -s "$bad/flipped.mp4" ]; then
    python3 - "$out/h264_aac.mp4" "$bad/flipped.mp4" <<'PY'
import random, sys
data = bytearray(open(sys.argv[1], "rb").read())
rng = random.Random(1234)
for _ in range(400):
    i = rng.randrange(len(data))
    data[i] ^= 0xFF
open(sys.argv[2], "wb").write(bytes(data))
PY
fi
[ -s "$bad/text.mp4" ] || printf 'This is not a video, it is a note to self.\n' > "$bad/text.mp4"
# 100 random bytes named .png: FFmpeg's image demuxer opens any file by its name, so only a
# failed decode tells it is no picture.
[ -s "$bad/damaged.png" ] || python3 -c 'import random, sys; r = random.Random(7); open(sys.argv[1], "wb").write(bytes(r.randrange(256) for _ in range(100)))' "$bad/damaged.png"
# An AVI whose video fourcc no decoder knows: demuxable, not decodable. Written as
# H.264 in AVI, then the fourcc in the stream headers is renamed.
if [ ! -s "$bad/unsupported.avi" ]; then
    ff -i "$out/queue1.mp4" -c copy -bsf:v h264_mp4toannexb -tag:v H264 "$bad/h264.avi"
    python3 - "$bad/h264.avi" "$bad/unsupported.avi" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
head = data[:8192]
for old in (b"H264", b"h264"):
    head = head.replace(old, b"VTRN")
open(sys.argv[2], "wb").write(bytes(head) + bytes(data[8192:]))
PY
    rm -f "$bad/h264.avi"
fi
echo "fixtures: $(ls "$out" | wc -l) files in $out" >&2
