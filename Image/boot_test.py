#!/usr/bin/env python3
"""The appliance image, booted in QEMU and checked from outside the guest (Image/boot-test.sh runs it).

The guest is a copy of the test variant of the image (`Image/build.sh --test`): the product plus a
root shell on its second serial port, through which this script signals the player and asks what
only root can see. Everything else is observed the way an operator would: the screen through QEMU's
`screendump`, the sound through QEMU's wav capture of the emulated HDA card, the player through its
inspector on a host-forwarded HTTPS port, USB sticks plugged through QEMU's monitor.

Nothing waits a fixed time for the guest: every wait polls for an event with a deadline
(VITRINE_BOOT_TIMEOUT seconds, default 600), so a slow host is slower, not failing.
"""
import argparse
import json
import math
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np

TIMEOUT = float(os.environ.get("VITRINE_BOOT_TIMEOUT", "600"))
# Emulated CPUs: two, as a signage box has at least (QEMU runs each in its own host thread, so the
# boot and the player's start use both of a 2-core host); 1 reproduces the earlier figures.
CPUS = os.environ.get("VITRINE_BOOT_CPUS", "2")
# Above this share of the time an emulated CPU's host thread waited runnable, the guest was starved
# by the host (its timers late, its sound card refilled late): a sound check that fails then is
# measured again, as Image/vm-kms-test.sh's sync case does.
STARVED_LIMIT = 15


def say(message):
    print(f"boot-test: {message}", file=sys.stderr, flush=True)


class Failure(Exception):
    pass


class NotMeasured(Exception):
    """What a check could not measure on this host; said, not failed."""


def read_ppm(path):
    data = open(path, "rb").read()
    fields, index = [], 0
    while len(fields) < 4:
        while data[index:index + 1].isspace():
            index += 1
        if data[index:index + 1] == b"#":
            while data[index:index + 1] not in (b"\n", b""):
                index += 1
            continue
        start = index
        while not data[index:index + 1].isspace():
            index += 1
        fields.append(data[start:index])
    index += 1
    width, height = int(fields[1]), int(fields[2])
    pixels = np.frombuffer(data[index:index + width * height * 3], dtype=np.uint8)
    return pixels.reshape(height, width, 3)


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * math.log10(255 * 255 / mse)


class Guest:
    """One QEMU process: a UEFI PC with the appliance's disk, a virtio GPU, an HDA card, a network."""

    def __init__(self, work, disk, ovmf_code, ovmf_vars, port, name):
        self.work, self.disk, self.port, self.name = work, disk, port, name
        self.ovmf_code, self.ovmf_vars = ovmf_code, ovmf_vars
        self.monitor_path = os.path.join(work, "monitor.sock")
        self.shell_path = os.path.join(work, "shell.sock")
        self.console_path = os.path.join(work, f"console-{name}.log")
        self.audio_path = os.path.join(work, f"audio-{name}.wav")
        self.process = None
        self.shell_socket = None
        self.shell_buffer = b""
        self.counter = 0

    def start(self):
        for path in (self.monitor_path, self.shell_path):
            if os.path.exists(path):
                os.unlink(path)
        command = [
            "qemu-system-x86_64", "-name", f"vitrine-{self.name},debug-threads=on", "-nodefaults", "-machine", "q35,accel=tcg", "-cpu", "max,avx2=off", "-smp", CPUS, "-m", "2048",
            "-drive", f"if=pflash,format=raw,readonly=on,file={self.ovmf_code}",
            "-drive", f"if=pflash,format=raw,file={self.ovmf_vars}",
            "-drive", f"file={self.disk},if=virtio,format=raw,cache=writeback",
            "-device", "virtio-vga", "-display", "none",
            "-audiodev", f"wav,id=snd0,path={self.audio_path},out.frequency=48000",
            "-device", "ich9-intel-hda", "-device", "hda-output,audiodev=snd0,mixer=off",
            "-netdev", f"user,id=net0,hostfwd=tcp:127.0.0.1:{self.port}-:8443",
            "-device", "virtio-net-pci,netdev=net0",
            "-device", "qemu-xhci,id=xhci", "-device", "i6300esb",
            "-rtc", "base=utc",
            "-serial", f"file:{self.console_path}",
            "-serial", f"unix:{self.shell_path},server=on,wait=off",
            "-monitor", f"unix:{self.monitor_path},server=on,wait=off",
            "-no-reboot",
        ]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        self.started = time.monotonic()
        self.started_wall = time.time()
        deadline = time.monotonic() + 30
        while not os.path.exists(self.monitor_path):
            if self.process.poll() is not None:
                raise Failure(f"QEMU exited with status {self.process.returncode}")
            if time.monotonic() > deadline:
                raise Failure("QEMU never opened its monitor socket")
            time.sleep(0.1)
        self.started_waits = self.cpu_waits()

    def cpu_waits(self):
        """(now in ns, {thread: ns}): how long each emulated CPU's host thread (QEMU's `CPU n/TCG`,
        named with debug-threads) has waited runnable for a host CPU."""
        waits = {}
        for task in os.listdir(f"/proc/{self.process.pid}/task"):
            try:
                with open(f"/proc/{self.process.pid}/task/{task}/comm") as comm:
                    if not comm.read().startswith("CPU "):
                        continue
                with open(f"/proc/{self.process.pid}/task/{task}/schedstat") as stat:
                    waits[task] = int(stat.read().split()[1])
            except (OSError, IndexError, ValueError):
                continue
        return time.monotonic_ns(), waits

    @staticmethod
    def starved(before, after):
        """The largest share of the time between two `cpu_waits`, in %, an emulated CPU waited."""
        span = after[0] - before[0]
        shares = [100 * (after[1][task] - before[1][task]) / span for task in after[1] if task in before[1]]
        return max(shares, default=0.0) if span > 0 else 0.0

    def since_power_on(self):
        return time.monotonic() - self.started

    def monitor(self, command, timeout=60):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(timeout)
            connection.connect(self.monitor_path)
            data = b""
            while not data.endswith(b"(qemu) "):
                chunk = connection.recv(65536)
                if not chunk:
                    break
                data += chunk
            connection.sendall(command.encode() + b"\n")
            data = b""
            if command == "quit":
                return ""
            while not data.endswith(b"(qemu) "):
                chunk = connection.recv(65536)
                if not chunk:
                    break
                data += chunk
            return data.decode(errors="replace")

    def screendump(self, path):
        if os.path.exists(path):
            os.unlink(path)
        self.monitor(f"screendump {path}")
        return read_ppm(path)

    # --- The test console (ttyS1): one command at a time, its output and exit status.
    def _shell_connect(self):
        if self.shell_socket is None:
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(self.shell_path)
            self.shell_socket = connection
            self.shell_buffer = b""

    def shell(self, command, timeout=120, check=True):
        self._shell_connect()
        self.counter += 1
        tag = f"{os.getpid()}x{self.counter}"
        line = f"stty -echo 2>/dev/null; echo @@B{tag}; {command}; echo @@E{tag} $?\n"
        self.shell_socket.sendall(line.encode())
        pattern = re.compile(rb"@@B" + tag.encode() + rb"\r?\n(.*?)@@E" + tag.encode() + rb" (\d+)", re.S)
        deadline = time.monotonic() + timeout
        while True:
            match = pattern.search(self.shell_buffer)
            if match:
                self.shell_buffer = self.shell_buffer[match.end():]
                output, status = match.group(1).decode(errors="replace").replace("\r", ""), int(match.group(2))
                if check and status != 0:
                    raise Failure(f"guest command failed ({status}): {command}\n{output}")
                return output
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Failure(f"guest command timed out after {timeout:.0f} s: {command}")
            self.shell_socket.settimeout(min(remaining, 5))
            try:
                chunk = self.shell_socket.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                self.shell_socket = None
                raise Failure("the guest's test console closed")
            self.shell_buffer += chunk

    def wait_for_shell(self, deadline):
        while time.monotonic() < deadline:
            self.check_running()
            try:
                self.shell_socket = None
                self.shell("true", timeout=10)
                return
            except (Failure, OSError):
                time.sleep(2)
        raise Failure("the guest's test console never answered")

    def check_running(self):
        if self.process.poll() is not None:
            raise Failure(f"QEMU exited with status {self.process.returncode}; console:\n{self.console_tail()}")

    def console_tail(self, lines=40):
        try:
            text = open(self.console_path, errors="replace").read().splitlines()
        except OSError:
            return ""
        return "\n".join("    " + line for line in text[-lines:])

    def power_cut(self):
        """QEMU quits at once: no shutdown, the guest's caches are lost as in a power cut."""
        try:
            self.monitor("quit", timeout=10)
        except OSError:
            pass
        self.stop()

    def stop(self):
        if self.shell_socket:
            self.shell_socket.close()
            self.shell_socket = None
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Inspector:
    """The player's HTTPS inspector through the host-forwarded port."""

    def __init__(self, port, token, certificate):
        self.base = f"https://127.0.0.1:{port}"
        self.token = token
        self.context = ssl.create_default_context(cafile=certificate)

    def get(self, path, timeout=15):
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout, context=self.context) as response:
            return response.read()

    def json(self, path):
        return json.loads(self.get(path))

    def wait_json(self, path, deadline, predicate=lambda value: True):
        last = None
        while time.monotonic() < deadline:
            try:
                value = self.json(path)
                if predicate(value):
                    return value
                last = value
            except (urllib.error.URLError, OSError, ValueError) as error:
                last = error
            time.sleep(2)
        raise Failure(f"{path} never answered as expected; last: {last}")


class Programme:
    """What the demo schedule shows at an instant: `vitrine programme --json`, frames from
    `vitrine thumbnails --exact`, both placed on the screen the way the player places them."""

    def __init__(self, vitrine, schedule, work, width, height, around):
        self.vitrine, self.schedule, self.work = vitrine, schedule, work
        self.width, self.height = width, height
        start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(around) - 120))
        end = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(around) + 4 * 3600))
        output = subprocess.run([vitrine, "programme", schedule, "--json", "--from", start, "--to", end],
                                check=True, capture_output=True, text=True).stdout
        self.changes = [(self.utc(change["utc"]), change) for change in json.loads(output)["changes"]]

    @staticmethod
    def utc(text):
        return float(subprocess.run(["date", "-u", "-d", text, "+%s"], check=True, capture_output=True, text=True).stdout)

    def moment(self, utc_seconds):
        """The media and its time on screen at this instant."""
        current = None
        for at, change in self.changes:
            if at <= utc_seconds:
                current = (at, change)
        if current is None:
            raise Failure(f"the programme has nothing at {utc_seconds}")
        at, change = current
        media = os.path.join(os.path.dirname(self.schedule), change["media"])
        return media, change["media_time_seconds"] + (utc_seconds - at)

    def frames(self, media, times):
        """The frames the screen must show at these media times: thumbnails --exact, fitted into the
        screen (a still: the picture itself, filling the screen as the demo asks)."""
        folder = os.path.join(self.work, "thumbnails")
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        w, h = self.width, self.height
        if media.endswith(".png"):
            sources = [media] * len(times)
            scale = f"scale={w}:{h}:force_original_aspect_ratio=increase:flags=bilinear,crop={w}:{h}"
        else:
            written = subprocess.run([self.vitrine, "thumbnails", media, "--exact", "--out", folder,
                                      "--times", ",".join(f"{max(0.0, t):.3f}" for t in times)],
                                     capture_output=True, text=True).stdout.split()
            sources = written
            scale = f"scale={w}:{h}:force_original_aspect_ratio=decrease:flags=bilinear,pad={w}:{h}:(ow-iw)/2:(oh-ih)/2:black"
        result = []
        raw = os.path.join(self.work, "expected.rgb")
        for source in sources:
            subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i", source, "-vf", scale,
                            "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", raw], check=True)
            result.append(np.fromfile(raw, dtype=np.uint8).reshape(h, w, 3))
        return result


def picture_area(image):
    """Where no overlay ever is on the unconfigured demo: below the player's setup hint (the top
    tenth), left of the demo's top-right logo, above the bottom tenth (the import notices)."""
    height, width, _ = image.shape
    return image[int(height * 0.10): int(height * 0.85), : int(width * 0.70)]


def hint_band(image):
    """Where the player's setup hint is drawn: the middle of the top line."""
    height, width, _ = image.shape
    return image[int(height * 0.03): int(height * 0.08), int(width * 0.25): int(width * 0.75)]


class BootTest:
    def __init__(self, arguments):
        self.arguments = arguments
        self.work = arguments.work
        self.results = []
        self.figures = []
        self.failed = False

    def check(self, name, function):
        started = time.monotonic()
        try:
            detail = function()
            self.results.append((name, "ok", detail or ""))
            say(f"{name}: ok ({time.monotonic() - started:.0f} s) {detail or ''}")
        except Failure as error:
            self.failed = True
            self.results.append((name, "FAILED", str(error)))
            say(f"{name}: FAILED: {error}")
        except NotMeasured as error:
            self.results.append((name, "not measured", str(error)))
            say(f"{name}: NOT MEASURED: {error}")

    def guest_clock_offset(self):
        """Guest CLOCK_REALTIME minus the host's, measured through the test console."""
        before = time.time()
        guest = float(self.guest.shell("date +%s.%N").strip())
        after = time.time()
        return guest - (before + after) / 2

    def shows_programme(self, image, instant):
        """Compares the screen with the programme's frames from 15 s before (the demo's whole
        cycle) to 1 s after the guest's instant of the dump, every 0.2 s, then every frame (0.04 s)
        around the best: the best
        match, and how far its moment is from that instant. A show starts at the position of the
        instant it resolved the programme and runs on from there, so a slow start (a busy emulator
        decodes the first frame in seconds) leaves the picture behind the wall clock until wall-clock
        slaving exists; the clock itself is read through the console and the dump through the
        monitor, both late by the emulator's latency."""
        best = self.best_match(image, instant, [round(-15.0 + 0.2 * step, 2) for step in range(81)])
        around = best[1]
        return self.best_match(image, instant, [round(around + 0.04 * step, 2) for step in range(-5, 6)], best)

    def best_match(self, image, instant, shifts, best=(-1.0, None, None, None)):
        by_media = {}
        for shift in shifts:
            media, seconds = self.programme.moment(instant + shift)
            by_media.setdefault(media, []).append((shift, seconds))
        for media, moments in by_media.items():
            for (shift, seconds), expected in zip(moments, self.programme.frames(media, [m[1] for m in moments])):
                value = min(psnr(picture_area(expected), picture_area(image)), 60.0)
                # A still matches at every shift: among equal matches the moment nearest the clock's.
                if value > best[0] or (value == best[0] and abs(shift) < abs(best[1])):
                    best = (value, shift, media, seconds)
        return best

    def wait_for_programme(self, deadline, what):
        """Polls the screen until it shows the programme's frame for the guest's instant."""
        last = "nothing but black"
        offset = self.guest_clock_offset()
        while time.monotonic() < deadline:
            self.guest.check_running()
            path = os.path.join(self.work, "screen.ppm")
            dumped_at = time.time()
            image = self.guest.screendump(path)
            if picture_area(image).mean() > 8:
                if self.programme is None:
                    height, width, _ = image.shape
                    self.programme = Programme(self.arguments.vitrine, self.arguments.schedule, self.work, width, height, dumped_at + offset)
                value, shift, media, seconds = self.shows_programme(image, dumped_at + offset)
                last = f"best {value:.1f} dB at {shift:+.2f} s ({os.path.basename(media)} {seconds:.2f} s)"
                if value >= 25:   # the right picture; how exact its moment is, the shift says
                    shutil.copy(path, os.path.join(self.work, f"{what}.ppm"))
                    self.last_match = (image, media, seconds)
                    return dumped_at, value, shift, media, seconds
            time.sleep(0.5)
        raise Failure(f"{what}: the screen never showed the programme ({last})")

    def run(self):
        arguments = self.arguments
        deadline = lambda: time.monotonic() + TIMEOUT
        self.inspector = Inspector(arguments.port, open(arguments.token).read().strip(), arguments.certificate)
        self.guest = Guest(self.work, arguments.disk, arguments.ovmf_code, arguments.ovmf_vars, arguments.port, "first")
        self.programme = None
        try:
            self.guest.start()
            self.check("a power-on to first frame", self.first_frame)
            if self.failed:
                say("guest console:\n" + self.guest.console_tail())
                return
            self.check("c inspector and journal", self.inspector_and_journal)
            self.check("b sound", self.sound)
            self.check("h security and critical chain", self.security)
            self.check("d kill -9 and restart", self.kill_and_restart)
            self.check("e SIGSTOP and the watchdog", self.watchdog)
            self.check("f USB sticks", self.usb_sticks)
        finally:
            self.guest.stop()
        if not self.failed:
            self.check("g power cuts", self.power_cuts)

    # --- (a)
    def first_frame(self):
        end = time.monotonic() + TIMEOUT
        self.guest.wait_for_shell(end)
        dumped_at, value, shift, media, seconds = self.wait_for_programme(end, "first-frame")
        power_on_to_picture = dumped_at - self.guest.started_wall
        # Where the time went: the guest's uptime counts from the kernel's start, so the rest before
        # it is the firmware's and the boot loader's; the player's unit says when it started.
        uptime = float(self.guest.shell("cut -d' ' -f1 /proc/uptime").split()[0])
        before_kernel = (time.time() - self.guest.started_wall) - uptime
        started = self.guest.shell("systemctl show -P ExecMainStartTimestampMonotonic vitrine.service").strip()
        player_start = int(started) / 1e6 if started.isdigit() else float("nan")
        # The player's own account: READY=1 follows its first presented frame. The screendumps can
        # see the programme later than that: a picture still behind the programme after a slow
        # start, or a dump taken between two pictures, matches no moment of it yet.
        ready = self.ready_after(player_start)
        self.figures.append((f"power-on to first frame (TCG, {CPUS} CPUs)", f"{power_on_to_picture:.1f} s: firmware and boot loader "
                             f"{before_kernel:.1f} s, kernel to the player's start {player_start:.1f} s, the player's start "
                             f"to the programme on the screendump {power_on_to_picture - before_kernel - player_start:.1f} s "
                             f"(to its READY=1, its first frame presented, {ready:.1f} s by the guest's clock)"))
        # The setup hint is drawn over the programme (text where the frame has none). Its service
        # starts beside the show, so on a busy emulator it can come a few seconds after the first
        # frame: the screen is polled for it, with the usual deadline.
        hint_after = self.wait_for_hint(end, dumped_at)
        grown = self.guest.shell("df -B1M --output=size /var | tail -1").strip()
        if int(grown) < 2000:
            raise Failure(f"the data partition was not grown to the 3 GiB disk: /var has {grown} MiB")
        blame = self.guest.shell("systemd-analyze 2>/dev/null | head -1; systemd-analyze blame 2>/dev/null | head -8", check=False)
        say("systemd-analyze:\n" + "\n".join("    " + line for line in blame.splitlines()))
        return (f"{power_on_to_picture:.1f} s from power-on (/var grown to {grown} MiB); {os.path.basename(media)} at {seconds:.2f} s, "
                f"PSNR {value:.1f} dB against `vitrine thumbnails --exact`, {shift * 1000:+.0f} ms from the guest clock's moment; "
                f"the setup hint {hint_after:.1f} s after the first frame")

    def wait_for_hint(self, deadline, first_frame_at):
        """Polls the screen until the setup hint is over the programme's picture (its band differs
        from the programme's frame of that moment); returns how long after the first frame."""
        image, media_shown, seconds_shown = self.last_match
        offset = self.guest_clock_offset()
        while True:
            if image is not None:
                expected = self.programme.frames(media_shown, [seconds_shown])[0]
                if psnr(hint_band(expected), hint_band(image)) <= 25:
                    return time.time() - first_frame_at
            if time.monotonic() > deadline:
                raise Failure("the setup hint never came on the screen")
            time.sleep(1)
            self.guest.check_running()
            path = os.path.join(self.work, "screen.ppm")
            dumped_at = time.time()
            image = self.guest.screendump(path)
            value, _, media_shown, seconds_shown = self.shows_programme(image, dumped_at + offset)
            if value < 25:
                image = None   # between two pictures: look again

    # --- (b)
    def sound(self):
        """The HDA card's capture holds the demo video's soundtrack as FFmpeg decodes it, at the
        item's volume (0.8). Every 0.2 s window of each loud stretch (its edges left out) is found
        in the decode by cross-correlation and compared: a window matches when it has the decode's
        shape (signal to residual >= 25 dB) and level (within 0.5 dB of 0.8 x). Each stretch must
        match in most of its windows and in its median one: under TCG the emulated machine
        sometimes cannot refill the card in time, and the few windows around such an underrun (the
        player's count is in its status, `audioUnderruns`) hold a gap; wrong content or a wrong
        level matches nowhere. The player follows the wall clock, and eases an error out by
        resampling its sound up to 0.5 % faster or slower (`sync-adjust`): under TCG, where the
        emulated card's clock wanders against the guest's wall clock, it does so for seconds at a
        time, and 0.2 % moves a 440 Hz tone by 18 samples across a window. So each window is
        compared at the speed it plays at, measured from where its two halves lie in the decode
        (within 0.6 %: the follower's limit and the emulator's own drift), when that matches
        better than at 1:1; the largest speed used is reported per stretch. Not bit for bit:
        through ALSA's `default` device (plug, dmix) the emulated card's stream is resampled on its
        way to QEMU's capture; the bit-exact check of the engine's sound is Image/vm-kms-test.sh's
        audio case, on hw:0,0."""
        media = os.path.join(os.path.dirname(self.arguments.schedule), "media", "h264_aac.mp4")
        reference = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-i", media, "-map", "0:a",
                                    "-f", "s16le", "-ar", "48000", "-ac", "2", "-"], check=True, capture_output=True).stdout
        reference = np.frombuffer(reference, dtype="<i2").reshape(-1, 2).astype(np.float64)
        # A host that keeps the emulated CPUs waiting makes the guest refill its card late, and a
        # run of underruns leaves too few windows matching. Such a failure is measured again on
        # the stretches that follow, three attempts in all; if the host starved the guest through
        # all three, the check says it could not measure. A failure on a host that did not starve
        # the guest stays a failure.
        since, waits, attempt = 0, self.guest.started_waits, 1
        while True:
            result, problem, captured = self.sound_after(reference, since)
            starved = Guest.starved(waits, self.guest.cpu_waits())
            if problem is None:
                return f"{result}; the emulated CPUs waited {starved:.0f} % of the time"
            if starved <= STARVED_LIMIT:
                raise Failure(f"{problem}; the emulated CPUs waited {starved:.0f} % of the time")
            if attempt == 3:
                raise NotMeasured(f"the host kept the emulated CPUs waiting {starved:.0f} % of the time (above {STARVED_LIMIT} %) "
                                  f"in each of three attempts; the last: {problem}")
            say(f"b sound: {problem}; the host kept the emulated CPUs waiting {starved:.0f} % of the time: "
                f"measured again on the stretches that follow ({attempt} of 3)")
            since, waits, attempt = len(captured), self.guest.cpu_waits(), attempt + 1

    def sound_after(self, reference, since):
        """One attempt of (b) on the loud stretches that begin at or after sample `since`: (the
        report, what failed or None, the capture so far)."""
        end = time.monotonic() + TIMEOUT
        while True:
            captured = self.capture()
            loud = [stretch for stretch in self.loud_stretches(captured) if stretch[0] >= since]
            if len(loud) >= 2 or time.monotonic() > end:
                break
            time.sleep(5)
        if not loud:
            raise Failure(f"the capture is silent ({(len(captured) - since) / 48000:.1f} s, "
                          f"peak {np.abs(captured[since:]).max(initial=0):.0f})")
        window, hop, edge = 9600, 9600, 9600
        size = len(reference) + window
        spectrum = np.fft.rfft(reference[:, 0], n=size)
        stretches, failed = [], []
        for start, stop in loud:
            ratios, gains, speeds = [], [], []
            for offset in range(start + edge, stop - edge - window + 1, hop):
                piece = captured[offset:offset + window]
                correlation = np.fft.irfft(spectrum * np.conj(np.fft.rfft(piece[:, 0], n=size)))
                lag = int(np.argmax(correlation[: len(reference) - window]))
                ratio, gain = self.likeness(piece, reference, lag + np.arange(window, dtype=np.float64))
                rate_used = 1.0
                speed = self.speed(piece, reference, lag)
                if speed is not None:
                    # The line through the two halves' centres, at the speed they give.
                    centre, rate = speed
                    fitted = self.likeness(piece, reference, centre + (np.arange(window) - window / 4) * rate)
                    if fitted[0] > ratio:
                        (ratio, gain), rate_used = fitted, rate
                ratios.append(ratio)
                gains.append(gain)
                speeds.append((rate_used - 1) * 1e6)
            if not ratios:
                continue
            matching = [r >= 25 and abs(g) <= 0.5 for r, g in zip(ratios, gains)]
            matches = sum(matching)
            median_ratio, median_gain = float(np.median(ratios)), float(np.median(gains))
            # The largest speed change among the windows that match (a glitch's fit means nothing).
            fastest = max((v for v, match in zip(speeds, matching) if match), key=abs, default=0.0)
            summary = (f"{matches}/{len(ratios)} windows, median {median_ratio:.1f} dB ({median_gain:+.2f} dB level, "
                       f"speed up to {fastest:+.0f} ppm)")
            stretches.append(summary)
            if matches * 3 < len(ratios) * 2 or median_ratio < 25 or abs(median_gain) > 0.5:
                failed.append(summary)
        try:
            underruns = self.inspector.json("/api/status").get("audioUnderruns")
        except Exception as error:   # the inspector's own check is (c); here the count is only context
            underruns = f"unknown ({error})"
        report = "; ".join(stretches)
        self.figures.append(("sound against FFmpeg's decode, per stretch: windows matching (>= 25 dB, level within 0.5 dB "
                             "of 0.8; the largest speed change fitted); the player's underruns so far", f"{report}; underruns {underruns}"))
        if not stretches:
            raise Failure(f"no loud stretch is long enough to compare: {loud}")
        problem = f"the capture is not the soundtrack at volume 0.8: {'; '.join(failed)} (underruns {underruns})" if failed else None
        return (f"{len(stretches)} stretches of the soundtrack in {len(captured) / 48000:.0f} s captured: {report}; underruns {underruns}",
                problem, captured)

    @staticmethod
    def likeness(piece, reference, positions):
        """How well `piece` is the reference read at `positions` (fractional samples, linearly
        interpolated), times a gain: the signal to residual ratio in dB and the gain against
        0.8 in dB."""
        grid = np.arange(len(reference))
        expected = np.stack([np.interp(positions, grid, reference[:, channel]) for channel in (0, 1)], axis=1)
        gain = float(np.sum(piece * expected) / max(np.sum(expected * expected), 1e-9))
        residual = piece - gain * expected
        ratio = 10 * math.log10(max(np.sum(piece ** 2), 1e-9) / max(np.sum(residual ** 2), 1e-9))
        return ratio, 20 * math.log10(max(gain, 1e-9) / 0.8)

    @staticmethod
    def speed(piece, reference, lag, search=64, limit=0.006):
        """Where `piece`'s first half's centre lies in the reference and how fast the piece
        plays it (reference samples per captured sample), from each half's best match near
        `lag` (to a fraction of a sample); None past `limit` either way."""
        half = len(piece) // 2
        centres = []
        for index, guess in ((0, lag), (1, lag + half)):
            part = piece[index * half:(index + 1) * half, 0]
            low, high = max(0, guess - search), min(len(reference) - half, guess + search)
            if high <= low:
                return None
            scores = np.correlate(reference[low:high + half, 0], part, mode="valid")
            best = int(np.argmax(scores))
            shift = 0.0
            if 0 < best < len(scores) - 1:
                before, at, after = scores[best - 1:best + 2]
                curve = before - 2 * at + after
                shift = 0.5 * (before - after) / curve if curve != 0 else 0.0
            centres.append(low + best + shift + half / 2)
        rate = (centres[1] - centres[0]) / half
        return (centres[0], rate) if abs(rate - 1) <= limit else None

    def capture(self):
        data = open(self.guest.audio_path, "rb").read()
        index = 12
        while index + 8 <= len(data):
            chunk, size = data[index:index + 4], int.from_bytes(data[index + 4:index + 8], "little")
            if chunk == b"data":   # to the end of the file: the header's size is right only after QEMU exits
                body = data[index + 8:]
                return np.frombuffer(body[: len(body) // 4 * 4], dtype="<i2").reshape(-1, 2).astype(np.float64)
            index += 8 + size
        return np.zeros((0, 2))

    @staticmethod
    def loud_stretches(samples, block=4800):
        """Runs of at least 2 s whose every 0.1 s block is audible."""
        blocks = len(samples) // block
        loud = [np.sqrt(np.mean(samples[i * block:(i + 1) * block] ** 2)) > 200 for i in range(blocks)]
        stretches, start = [], None
        for i, value in enumerate(loud + [False]):
            if value and start is None:
                start = i
            elif not value and start is not None:
                if i - start >= 20:
                    stretches.append((start * block, i * block))
                start = None
        return stretches

    # --- (c)
    def inspector_and_journal(self):
        end = time.monotonic() + TIMEOUT
        # Playing, not waiting: under TCG the emulated machine cannot always decode in real time, so
        # a status taken during a moment's stall says waitingToPlayAtSpecifiedRate; the player must
        # say playing within the deadline, not at the first answer (the last answer is reported).
        status = self.inspector.wait_json("/api/status", end,
                                          lambda s: s.get("positionSeconds") is not None and s.get("state") == "playing")
        if status.get("entry") != "fallback" or "demo" not in (status.get("scheduleFile") or ""):
            raise Failure(f"status does not show the demo playing: {status}")
        logs = self.inspector.json("/api/logs?source=journal&boot=current&limit=2000")
        lines = logs.get("lines", [])
        if not lines:
            raise Failure("the journal has no lines of the player for this boot")
        # Names resolve through systemd-resolved with the DNS server DHCP gave (QEMU's 10.0.2.3),
        # not a resolv.conf left over from the machine that built the image.
        while True:
            dns = self.guest.shell("readlink /etc/resolv.conf; grep ^nameserver /etc/resolv.conf; resolvectl dns 2>&1", check=False)
            if "stub-resolv.conf" in dns and "127.0.0.53" in dns and "10.0.2.3" in dns:
                break
            if time.monotonic() > end:
                raise Failure(f"DNS is not set up from DHCP through systemd-resolved:\n{dns}")
            time.sleep(2)
        # The DHCP lease is asked for with the network card's MAC as the client identifier, not a
        # DUID derived from the machine ID, which the read-only root makes anew at every boot: the
        # screen keeps its address (and the inspector's URL) across reboots.
        lease = self.guest.shell("grep -h '^CLIENTID=' /run/systemd/netif/leases/* 2>&1; cat /sys/class/net/e*/address", check=False)
        macs = [line.strip().replace(":", "") for line in lease.splitlines() if re.fullmatch(r"\s*([0-9a-f]{2}:){5}[0-9a-f]{2}\s*", line)]
        if not macs or not any(f"CLIENTID=01{mac}" in lease for mac in macs):
            raise Failure(f"the DHCP client identifier is not the card's MAC:\n{lease}")
        # The setup hint names the inspector at the guest's address once DHCP gave it one (QEMU's
        # user network: 10.0.2.15), as its log line in the journal says.
        wanted = f"https://10.0.2.15:8443/"
        while True:
            hints = [l.get("message", "") for l in self.inspector.json("/api/logs?source=journal&boot=current&limit=2000").get("lines", [])
                     if l.get("label") == "vitrine.setup"]
            if any(wanted in hint for hint in hints):
                break
            if time.monotonic() > end:
                raise Failure(f"the setup hint never named {wanted}: {hints}")
            time.sleep(2)
        return (f"status {status.get('state')} on {status.get('display')}, item {status.get('item')} at {status.get('positionSeconds')} s; "
                f"{len(lines)} journal lines this boot; DHCP client ID 01{macs[0]}")

    # --- (h)
    def security(self):
        output = self.guest.shell("systemd-analyze security vitrine.service --no-pager 2>&1 | tail -1")
        match = re.search(r"Overall exposure level for vitrine.service: ([0-9.]+)", output)
        if not match:
            raise Failure(f"no exposure level: {output}")
        exposure = float(match.group(1))
        chain = self.guest.shell("systemd-analyze critical-chain vitrine.service --no-pager 2>&1 | tail -n +3", check=False)
        say("critical chain:\n" + "\n".join("    " + line for line in chain.splitlines()))
        self.figures.append(("vitrine.service exposure (guest)", f"{exposure}"))
        if exposure > 2.0:
            raise Failure(f"exposure {exposure} > 2.0")
        # systemd arms the board's watchdog (the emulated i6300esb here): RuntimeWatchdogSec=.
        watchdog = self.guest.shell("systemctl show -P WatchdogDevice; systemctl show -P RuntimeWatchdogUSec; "
                                    "journalctl -b -o cat --no-pager -t systemd | grep -i 'hardware watchdog' | tail -1", check=False)
        if "30s" not in watchdog and "30000000" not in watchdog:
            raise Failure(f"the hardware watchdog is not armed at 30 s: {watchdog}")
        # Nothing wakes up on a timer to compete with playback but what the appliance needs
        # (fstrim for the data partition, systemd's tmpfiles clean-up): no apt, no dpkg backup.
        timers = self.guest.shell("systemctl list-units --type=timer --state=active --no-legend --no-pager --plain --full 2>&1",
                                  check=False)
        timers = sorted(set(re.findall(r"[\w@.-]+\.timer", timers)))
        unwanted = [t for t in timers if t.startswith(("apt-", "dpkg-", "e2scrub"))]
        if unwanted:
            raise Failure(f"timers that compete with playback are active: {unwanted} (all: {timers})")
        priorities = self.thread_priorities()
        return (f"exposure {exposure}; hardware watchdog: {' '.join(watchdog.split())}; timers: {' '.join(timers)}; "
                f"{priorities}")

    def thread_priorities(self):
        """Inside the unit's sandbox (its system-call filter included) the player's demux and decode
        threads run 5 nice steps below its render thread, and libdispatch wrote no "Failed to set
        thread priority" line (setpriority is allowed, and its raise of its timer thread to -4 is
        within the unit's LimitNICE=)."""
        # The decoding threads exist while a video or sound item plays: between items, or on a
        # still picture, there are none, so the listing is read again until they show (up to 90 s,
        # longer than any item of the demo programme).
        deadline = time.monotonic() + 90
        while True:
            pid = self.main_pid()
            listing = self.guest.shell(f"for t in /proc/{pid}/task/*; do echo \"$(cat $t/stat)\"; done", check=False)
            threads = []
            for line in listing.splitlines():
                opened, closed = line.find("("), line.rfind(")")
                fields = line[closed + 1:].split()
                if opened < 0 or closed < 0 or len(fields) < 17:
                    continue
                threads.append((line[opened + 1:closed], int(fields[16])))
            # Threads Mesa starts from the render thread carry its name too (more of them with more
            # CPUs): all of them at one nice value.
            render = sorted({nice for name, nice in threads if name == "vitrine-render"})
            decoding = [(name, nice) for name, nice in threads if name in ("vitrine-demux", "vitrine-video", "vitrine-audio")]
            if len(render) == 1 and decoding:
                break
            if time.monotonic() > deadline:
                raise Failure(f"the player's threads are not as expected: {threads}")
            time.sleep(2)
        wrong = [(name, nice) for name, nice in decoding if nice != render[0] + 5]
        if wrong:
            raise Failure(f"decoding threads not 5 nice steps below the render thread (at {render[0]}): {wrong}")
        noise = self.guest.shell("journalctl -b -u vitrine.service -o cat --no-pager | grep -c 'Failed to set thread priority'",
                                 check=False).strip()
        if noise not in ("", "0"):
            raise Failure(f"the player's journal has {noise} 'Failed to set thread priority' lines this boot")
        return f"{len(decoding)} decoding threads at nice {render[0] + 5}, the render thread at {render[0]}"

    def main_pid(self):
        return int(self.guest.shell("systemctl show -P MainPID vitrine.service").strip() or 0)

    def guest_uptime_then(self, command):
        """Runs `command` in the guest right after reading its monotonic clock (seconds since boot)."""
        return float(self.guest.shell(f"cut -d' ' -f1 /proc/uptime; {command}").split()[0])

    def ready_after(self, since):
        """Seconds from the guest's monotonic instant `since` to the player's latest READY=1 (its
        first frame on screen: the unit goes active then)."""
        active = self.guest.shell("systemctl show -P ActiveEnterTimestampMonotonic vitrine.service").strip()
        return int(active) / 1e6 - since if active.isdigit() and int(active) > 0 else float("nan")

    def wait_restarted(self, old_pid, end):
        while time.monotonic() < end:
            pid = self.main_pid()
            if pid not in (0, old_pid):
                return pid
            time.sleep(1)
        raise Failure(f"the player (pid {old_pid}) was never restarted")

    # --- (d)
    def kill_and_restart(self):
        end = time.monotonic() + TIMEOUT
        pid = self.main_pid()
        killed_at = time.time()
        killed_uptime = self.guest_uptime_then(f"kill -9 {pid}")
        new_pid = self.wait_restarted(pid, end)
        # Black (or the console) first, then the programme again. Timed at the screendump that
        # showed it (matching a dump against the programme takes the host seconds).
        dumped_at, value, shift, media, seconds = self.wait_for_programme(end, "after-kill")
        back = dumped_at - killed_at
        ready = self.ready_after(killed_uptime)
        self.figures.append(("kill -9 to picture back", f"{back:.1f} s on the screendumps; {ready:.1f} s to the restarted player's first frame (READY=1) by the guest's clock"))
        return (f"pid {pid} -> {new_pid}; picture back after {back:.1f} s at the programme's position ({shift * 1000:+.0f} ms, {value:.1f} dB); "
                f"the guest's clock: {ready:.1f} s from the kill to READY=1")

    # --- (e)
    def watchdog(self):
        end = time.monotonic() + TIMEOUT
        pid = self.main_pid()
        stopped_at = time.time()
        stopped_uptime = self.guest_uptime_then(f"kill -STOP {pid}")
        new_pid = self.wait_restarted(pid, end)
        restarted_after = time.time() - stopped_at
        log = self.guest.shell("journalctl -b -u vitrine.service --no-pager -o cat | grep -i watchdog | tail -3", check=False)
        if "atchdog" not in log:
            raise Failure(f"the journal does not say the watchdog fired:\n{log}")
        dumped_at, value, shift, media, seconds = self.wait_for_programme(end, "after-watchdog")
        back = dumped_at - stopped_at
        ready = self.ready_after(stopped_uptime)
        # The operator's view of why it restarted: the inspector's journal lines of the unit include
        # what systemd said about it. (Timed apart from the picture: the inspector answers once the
        # restarted player has started it.)
        explained = self.inspector.wait_json("/api/logs?source=journal&boot=current&priority=warning&limit=200", end,
                                             lambda logs: any("atchdog" in l.get("message", "") for l in logs.get("lines", [])))
        said = next(l for l in explained["lines"] if "atchdog" in l.get("message", ""))
        if said.get("label") != "systemd":
            raise Failure(f"the watchdog line is not systemd's: {said}")
        told = time.time() - stopped_at
        self.figures.append(("SIGSTOP to restart / picture back", f"{restarted_after:.1f} s / {back:.1f} s on the screendumps; "
                             f"{ready:.1f} s to the restarted player's READY=1 by the guest's clock"))
        return (f"restarted {restarted_after:.1f} s after SIGSTOP (WatchdogSec=30s), picture back after {back:.1f} s "
                f"(the guest's clock: READY=1 after {ready:.1f} s), "
                f"the inspector showed systemd's line after {told:.1f} s; journal: {log.strip().splitlines()[-1]}")

    # --- (f)
    def plug(self, image, name):
        self.guest.monitor(f"drive_add 0 if=none,id={name},file={image},format=raw,readonly=on")
        output = self.guest.monitor(f"device_add usb-storage,bus=xhci.0,drive={name},id={name}dev")
        if "rror" in output:
            raise Failure(f"device_add: {output}")

    def unplug(self, name):
        self.guest.monitor(f"device_del {name}dev")

    def screen_colour(self):
        image = self.guest.screendump(os.path.join(self.work, "screen.ppm"))
        h, w, _ = image.shape
        return image[h // 4: h * 3 // 4, w // 4: w * 3 // 4].reshape(-1, 3).mean(axis=0)

    def wait_colour(self, colour, end, what):
        last = None
        while time.monotonic() < end:
            last = self.screen_colour()
            if np.all(np.abs(last - np.array(colour)) < 24):
                return
            time.sleep(1)
        raise Failure(f"{what}: the screen never turned {colour} (last {last.round()})")

    def usb_sticks(self):
        end = time.monotonic() + TIMEOUT
        self.plug(self.arguments.good_stick, "good")
        self.wait_colour((0, 128, 255), end, "signed bundle")
        # A bundle is current: the setup hint goes (it is looked at every 5 s).
        # The bundle's picture is one flat colour (with black bars): without the hint every row of
        # the band is uniform; text makes its rows vary.
        while hint_band(self.guest.screendump(os.path.join(self.work, "screen.ppm"))).astype(np.float64).std(axis=1).max() >= 12:
            if time.monotonic() > end:
                raise Failure("the setup hint stayed on screen after the bundle was imported")
            time.sleep(1)
        status = self.inspector.json("/api/status")
        if "bundles" not in (status.get("scheduleFile") or ""):
            raise Failure(f"status does not name the imported bundle: {status.get('scheduleFile')}")
        self.unplug("good")
        self.plug(self.arguments.bad_stick, "bad")
        # The import refuses it; the journal says why; the imported content goes on.
        while time.monotonic() < end:
            log = self.guest.shell("journalctl -b --no-pager -o cat -u 'vitrine-import@*' | grep -iE 'refused|signature' | tail -2", check=False)
            if log.strip():
                break
            time.sleep(2)
        else:
            raise Failure("the bad stick's import never reported a refusal")
        self.wait_colour((0, 128, 255), end, "after the bad stick")
        self.unplug("bad")
        return f"signed bundle on screen; bad signature refused ({log.strip().splitlines()[-1]}), old content continues"

    # --- (g)
    def power_cuts(self):
        arguments = self.arguments
        # Cut the power in the middle of an import of a big bundle.
        guest = Guest(self.work, arguments.disk, arguments.ovmf_code, arguments.ovmf_vars, arguments.port, "cut-import")
        self.guest = guest
        try:
            guest.start()
            end = time.monotonic() + TIMEOUT
            guest.wait_for_shell(end)
            self.wait_colour((0, 128, 255), end, "boot after the sticks")
            self.plug(arguments.big_stick, "big")
            while time.monotonic() < end:
                copying = guest.shell("ls -a /var/lib/private/vitrine/bundles/ 2>/dev/null | grep -c staging || true", check=False)
                if copying.strip() not in ("", "0"):
                    break
                time.sleep(0.5)
            else:
                raise Failure("the big bundle's import never started")
            guest.power_cut()
        finally:
            guest.stop()
        for name in ("after-import-cut", "after-playback-cut"):
            guest = Guest(self.work, arguments.disk, arguments.ovmf_code, arguments.ovmf_vars, arguments.port, name)
            self.guest = guest
            try:
                guest.start()
                end = time.monotonic() + TIMEOUT
                guest.wait_for_shell(end)
                self.wait_colour((0, 128, 255), end, f"{name}: the last complete bundle")
                fsck = guest.shell("journalctl -b --no-pager -o cat -u 'systemd-fsck*' | tail -3; "
                                   "dmesg | grep -E 'EXT4-fs.*(recovery|error)|EROFS' | tail -3", check=False)
                if re.search(r"error|corrupt", fsck, re.I) and "clean" not in fsck:
                    raise Failure(f"{name}: file system trouble:\n{fsck}")
                say(f"{name}: " + " | ".join(fsck.strip().splitlines()))
                if name == "after-import-cut":
                    guest.power_cut()
            finally:
                guest.stop()
        return "after a cut during an import and one during playback the last complete bundle plays; fsck clean"


def main():
    parser = argparse.ArgumentParser()
    for name in ("work", "disk", "ovmf-code", "ovmf-vars", "vitrine", "schedule", "token", "certificate",
                 "good-stick", "bad-stick", "big-stick"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    test = BootTest(arguments)
    test.run()
    print()
    print("appliance boot test:")
    for name, outcome, detail in test.results:
        print(f"  {outcome:6} {name}: {detail}")
    for name, value in test.figures:
        print(f"  figure: {name}: {value}")
    sys.exit(1 if test.failed else 0)


if __name__ == "__main__":
    main()
