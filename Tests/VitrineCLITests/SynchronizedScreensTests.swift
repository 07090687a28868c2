import ChildProcesses
import Foundation
import Testing

/// Screens that follow the same schedule on their wall clocks show the same frame at the same
/// moment, with no coordinator: real `vitrine play` processes on the headless display, compared
/// from their presentation logs (`presented_utc_ns`) and, for sound, from one recording of both.
@Suite("Synchronised screens", .enabled(if: CommandRunner.canRun, "needs fixtures, the vitrine binary, ffmpeg and ffprobe"),
       .enabled(if: ProcessInfo.processInfo.environment["VITRINE_SANITIZER"] == nil,
                "measures millisecond skews between real-time processes: meaningless under a sanitizer (scripts/tsan.sh); the follower's logic runs there in ClockFollowingTests"))
struct SynchronizedScreensTests {
    /// A schedule that plays the 70 s sync clip all the time.
    static func schedule(in directory: String) throws -> String {
        let path = directory + "/wall.toml"
        try """
            version = 1
            timezone = "UTC"
            fallback = "wall"

            [[playlists.wall.items]]
            video = "\(CommandRunner.fixture("sync.mp4"))"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// One presented frame: which media time, and when on the wall clock.
    struct Frame {
        var source: String
        var pts: Double
        var utc: Int64
    }

    static func records(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static func frames(_ records: [[String: Any]]) -> [Frame] {
        records.compactMap { record in
            guard record["type"] as? String == "frame", let pts = record["pts_s"] as? Double,
                  let utc = (record["presented_utc_ns"] as? NSNumber)?.int64Value else { return nil }
            return Frame(source: record["source"] as? String ?? "", pts: pts, utc: utc)
        }
    }

    /// For each frame of `frames` shown after `from` (UTC ns), how far apart (ns) the same picture
    /// was shown by `other` (the nearest showing of the same pts; none where `other` never showed
    /// it), and whether both showings were on their refresh: each came one refresh (`refresh` ns,
    /// ±2 ms) after the frame before it on its screen. A screen whose process the host did not run
    /// in time finishes a refresh late and shows its frame a refresh later (a missed vblank on
    /// KMS): that is the host's delay, not the follower's error.
    static func pairs(_ frames: [Frame], against other: [Frame], from: Int64, refresh: Int64 = 40_000_000)
        -> [(skew: Int64, onTime: Bool)]
    {
        func onTime(_ frames: [Frame]) -> [Bool] {
            frames.indices.map { $0 > 0 && abs(frames[$0].utc - frames[$0 - 1].utc - refresh) <= 2_000_000 }
        }
        var byPTS: [Double: [(utc: Int64, onTime: Bool)]] = [:]
        for (frame, onTime) in zip(other, onTime(other)) { byPTS[frame.pts, default: []].append((frame.utc, onTime)) }
        return zip(frames, onTime(frames)).filter { $0.0.utc >= from }.compactMap { frame, onTime in
            guard let nearest = byPTS[frame.pts]?.min(by: { abs($0.utc - frame.utc) < abs($1.utc - frame.utc) }) else { return nil }
            return (abs(nearest.utc - frame.utc), onTime && nearest.onTime)
        }
    }

    @Test("three screens started 0, 1.3 and 2.9 s apart show the same frame at the same wall-clock instant, within one refresh, for 60 s")
    func threeScreens() throws {
        let directory = try CommandRunner.temporaryDirectory("sync")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let schedule = try Self.schedule(in: directory)
        var players: [ChildProcess] = []
        defer { players.forEach { $0.terminate(SIGKILL) } }
        for (index, delay) in [0.0, 1.3, 2.9].enumerated() {
            if index > 0 { Thread.sleep(forTimeInterval: delay - [0.0, 1.3, 2.9][index - 1]) }
            players.append(try ChildProcess(executable: CommandRunner.vitrine!, arguments: [
                "play", schedule, "--display", "headless", "--mode", "320x240@25", "--no-audio",
                "--duration", String(64 - delay), "--presentation-log", "\(directory)/screen\(index).jsonl",
            ], standardError: "\(directory)/screen\(index).err"))
        }
        for (index, player) in players.enumerated() {
            let status = player.wait()
            #expect(status == 0, "screen \(index): \((try? String(contentsOfFile: "\(directory)/screen\(index).err", encoding: .utf8)) ?? "")")
        }
        let screens = try (0..<3).map { try Self.frames(Self.records("\(directory)/screen\($0).jsonl")) }
        for (index, frames) in screens.enumerated() { try #require(frames.count > 1000, "screen \(index) showed \(frames.count) frames") }
        // From one second after the last screen's first frame, over its 60 s.
        let from = screens.compactMap { $0.first?.utc }.max()! + 1_000_000_000
        let refresh: Int64 = 40_000_000  // 25 Hz
        // Every frame both screens showed on its refresh: within one refresh of each other. A frame
        // one of them showed a refresh late (its process not run in time by a busy host) may be a
        // refresh further apart; such frames must stay rare (at most 2 % of the pairs) and never
        // more than two refreshes apart.
        var all: [Int64] = [], late = 0
        for (a, b) in [(0, 1), (0, 2), (1, 2)] {
            let pairs = Self.pairs(screens[b], against: screens[a], from: from, refresh: refresh)
            #expect(pairs.count > 1000, "screens \(a) and \(b) had \(pairs.count) frames in common")
            let onTime = pairs.filter(\.onTime).map(\.skew), delayed = pairs.filter { !$0.onTime }.map(\.skew)
            all += onTime
            late += delayed.count
            let worst = onTime.max() ?? 0
            #expect(worst <= refresh, "screens \(a) and \(b): the same frame, shown on its refresh by both, up to \(Double(worst) / 1e6) ms apart")
            #expect(delayed.count * 50 <= pairs.count, "screens \(a) and \(b): \(delayed.count) of \(pairs.count) frames shown a refresh late by one of them")
            let worstDelayed = delayed.max() ?? 0
            #expect(worstDelayed <= 2 * refresh, "screens \(a) and \(b): a frame one of them showed late, \(Double(worstDelayed) / 1e6) ms apart")
        }
        let sorted = all.sorted()
        print("sync skew over \(sorted.count) frame pairs shown on their refresh (\(late) more with a late refresh): p50 \(Double(sorted[sorted.count / 2]) / 1e6) ms, "
              + "p99 \(Double(sorted[sorted.count * 99 / 100]) / 1e6) ms, max \(Double(sorted.last!) / 1e6) ms (refresh 40 ms)")
        // Every screen's log: no seek needed after the start (they were all in step).
        for (index, path) in (0..<3).map({ "\(directory)/screen\($0).jsonl" }).enumerated() {
            let seeks = try Self.records(path).filter { $0["event"] as? String == "sync-seek" }
            #expect(seeks.count <= 1, "screen \(index) sought \(seeks.count) times: \(seeks)")
        }
    }

    @Test("a screen whose wall clock steps 80 ms eases it out by resampling, with no seek and no restart of its sound; a 2 s step is one seek",
          .enabled(if: PulseRecording.isInstalled, "needs PulseAudio and its ALSA plugin (a clocked sound device without a sound card)"))
    func clockSteps() throws {
        let directory = try CommandRunner.temporaryDirectory("sync-steps")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pulse = try PulseRecording(directory: directory)
        let schedule = try Self.schedule(in: directory)
        let log = directory + "/screen.jsonl"
        let run = try CommandRunner.run("/usr/bin/env", [
            "ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:\(pulse.alsaConfiguration)", CommandRunner.vitrine!,
            "play", schedule, "--display", "headless", "--mode", "320x240@25", "--audio-device", "left",
            // The programme as of 3 s into the 70 s loop (its period divides the instant), so no
            // seam falls near a step: a step just before a seam is absorbed by the next loop's
            // start (no seek), which made this test fail with the time of day it ran at.
            "--start-at", "2026-01-01T00:00:03Z",
            "--clock-step", "8=0.08", "--clock-step", "36=2", "--duration", "44", "--presentation-log", log,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try Self.records(log)
        let start = try #require(records.first { $0["type"] as? String == "frame" }?["presented_ns"] as? NSNumber).int64Value
        func seconds(_ record: [String: Any]) -> Double { Double(((record["at_ns"] as? NSNumber)?.int64Value ?? 0) - start) / 1e9 }
        let events = records.filter { $0["type"] as? String == "event" }
        let adjusts = events.filter { $0["event"] as? String == "sync-adjust" }
        let seeks = events.filter { $0["event"] as? String == "sync-seek" }
        let joins = events.filter { $0["event"] as? String == "audio-joined" }
        // The 80 ms step: eased out by speeding up 0.5 %, no seek, the sound never restarted.
        let eased = adjusts.filter { seconds($0) > 7 && seconds($0) < 35 }
        #expect(eased.contains { ($0["rate_ppm"] as? Int) == 5000 }, "\(eased)")
        #expect(eased.contains { abs((($0["error_s"] as? Double) ?? 0) + 0.08) < 0.02 }, "the error measured was not the 80 ms step: \(eased)")
        #expect(!seeks.contains { seconds($0) < 35 }, "a seek before the 2 s step: \(seeks)")
        // The first join is the sound's start (as late as the device is slow to start); any other
        // before the 2 s step would be a restart.
        #expect(joins.dropFirst().filter { seconds($0) < 35 }.isEmpty, "the sound restarted: \(joins)")
        // The 2 s step: one seek that measured it.
        let late = seeks.filter { seconds($0) > 35 }
        #expect(late.count == 1, "\(late)")
        if let error = late.first?["error_s"] as? Double { #expect(abs(error + 2) < 0.1, "the seek measured \(error) s") }
        // The picture went on in order all along.
        let frames = Self.frames(records)
        #expect(frames.count > 900)
    }

    @Test("two screens' sound, started 1.7 s apart, is aligned after the first second (cross-correlation lag: median at most 3 ms, every window within 8 ms, through PulseAudio)",
          .enabled(if: PulseRecording.isInstalled, "needs PulseAudio and its ALSA plugin (a clocked sound device without a sound card)"))
    func soundInStep() throws {
        // A host too busy to run the players' sound threads when they wake makes libpulse's
        // latency reports wander (below): a failure while those threads waited runnable more than
        // 0.5 ms on average each time they woke measures the host, so it is measured again, three
        // attempts at most (measured: 0.08 ms a wake-up on a quiet host, 0.9-1.1 ms beside six
        // busy processes, where one run in two to four fails by up to 19 ms).
        let (typicalLimit, windowLimit) = (3.0, 8.0)  // ms: the median window, every window
        var attempt = 1
        while true {
            let measured = try measureSoundInStep()
            let sorted = measured.lags.map(abs).sorted()
            let typical = sorted.isEmpty ? 0 : sorted[(sorted.count - 1) / 2]
            let inBounds = sorted.count >= 5 && typical <= typicalLimit && (sorted.last ?? 0) <= windowLimit
            let waited = String(format: "%.2f ms", measured.starved * 1000)
            if !inBounds && measured.starved > 0.000_5 && attempt < 3 {
                print("sound lag: \(measured.lags) with the sound threads kept waiting \(waited) a wake-up on average: measuring again")
                attempt += 1
                continue
            }
            print("sound lag between the screens (the sound threads kept waiting \(waited) a wake-up on average, at most): \(measured.lags)")
            #expect(sorted.count >= 5, "\(measured.lags)")
            #expect(typical <= typicalLimit, "the screens' sound is typically \(typical) ms apart: \(measured.lags); \(measured.story)")
            for lag in measured.lags { #expect(abs(lag) <= windowLimit, "the screens' sound is \(lag) ms apart; \(measured.story)") }
            return
        }
    }

    /// Plays two screens' sound into one recording and measures the lag between them.
    /// `starved`: seconds the players' sound threads waited runnable per wake-up (the worst's).
    func measureSoundInStep() throws -> (lags: [Double], story: String, starved: Double) {
        let directory = try CommandRunner.temporaryDirectory("sync-sound")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pulse = try PulseRecording(directory: directory)
        let schedule = try Self.schedule(in: directory)
        let recording = try pulse.record(to: directory + "/both.raw")
        var players: [ChildProcess] = []
        defer { players.forEach { $0.terminate(SIGKILL) } }
        for (index, device) in ["left", "right"].enumerated() {
            if index > 0 { Thread.sleep(forTimeInterval: 1.7) }
            players.append(try ChildProcess(executable: "/usr/bin/env", arguments: [
                "ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:\(pulse.alsaConfiguration)", CommandRunner.vitrine!,
                "play", schedule, "--display", "headless", "--mode", "320x240@25", "--audio-device", device,
                "--duration", index == 0 ? "16" : "14.3", "--presentation-log", "\(directory)/\(device).jsonl",
            ], standardError: "\(directory)/\(device).err"))
        }
        // The sound threads' waits, from the first look at each to the last before it ended.
        var waits: [String: (first: (wait: UInt64, runs: UInt64), last: (wait: UInt64, runs: UInt64))] = [:]
        while players.contains(where: \.isRunning) {
            for (thread, wait, runs) in players.flatMap({ Self.soundThreadWaits($0.pid) }) {
                waits[thread, default: ((wait, runs), (wait, runs))].last = (wait, runs)
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        // Seconds waited runnable per wake-up, the worst thread's (one seen running 100 times at least).
        let starved = waits.values.map { span in
            span.last.runs >= span.first.runs + 100 ? Double(span.last.wait - span.first.wait) / Double(span.last.runs - span.first.runs) / 1e9 : 0
        }.max() ?? 0
        for (index, player) in players.enumerated() {
            #expect(player.wait() == 0, "screen \(index): \((try? String(contentsOfFile: "\(directory)/\(["left", "right"][index]).err", encoding: .utf8)) ?? "")")
        }
        recording.terminate()
        // Left is one screen, right the other, in one recording: where both sound, the lag between them.
        let analysis = try ChildProcess.run("python3", [CommandRunner.root.appendingPathComponent("scripts/sound_lag.py").path, directory + "/both.raw"])
        #expect(analysis.status == 0, "\(analysis.stderr)")
        let lags = analysis.stdout.split(separator: "\n").compactMap { Double($0.split(separator: " ").last ?? "") }
        // Through PulseAudio (the clocked device this machine has) the server's per-stream
        // latency reports are an interpolation that wanders a few milliseconds as it settles.
        // Each player stamps its clock from the mean of ~1.6 s of readings, which smooths most of
        // that: measured here windows within ±1.1 ms (one reading per stamp gave −1.5…+3.4 ms, and
        // a loaded 2-core CI host 5.4 ms). On a saturated host one stream's readings can wander
        // ±3.5 ms (libpulse's interpolation between its 1.5 s timing updates, most likely) and
        // the lag with them (CI once: median 6.9 ms; docs/audio.md, "Clock"), hence the attempts.
        // A device with exact position reports is measured on the kernel's loopback card in a VM
        // (`Image/vm-kms-test.sh sync`: 0.04–0.38 ms, steady, bound 1 ms); what this proves is
        // that two screens sound as one through a sound server too, far inside a frame (40 ms)
        // and below an echo.
        // When they are apart, how each screen's sound joined and was steered says why, in one
        // line per screen (a CI log keeps only its tail): seconds from its first frame, event,
        // error in ms, speed change in ppm.
        let story = lags.contains(where: { abs($0) > 3.0 }) ? ["left", "right"].map { "\($0): " + Self.soundStory("\(directory)/\($0).jsonl") }.joined(separator: "; ") : ""
        return (lags, story, starved)
    }

    /// Per sound thread of process `pid` (its output thread and libpulse's), "pid/tid", the
    /// nanoseconds it has waited runnable and the times it ran (`/proc/PID/task/TID/schedstat`).
    static func soundThreadWaits(_ pid: pid_t) -> [(String, UInt64, UInt64)] {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return [] }
        return tasks.compactMap { tid in
            let task = "/proc/\(pid)/task/\(tid)"
            guard let name = try? String(contentsOfFile: task + "/comm", encoding: .utf8),
                  ["vitrine-audio-o", "threaded-ml"].contains(name.trimmingCharacters(in: .whitespacesAndNewlines)),
                  let stat = try? String(contentsOfFile: task + "/schedstat", encoding: .utf8) else { return nil }
            let fields = stat.split(separator: " ")
            guard fields.count >= 3, let wait = UInt64(fields[1]), let runs = UInt64(fields[2].trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
            return ("\(pid)/\(tid)", wait, runs)
        }
    }

    /// A screen's sound in its presentation log: when it joined the picture, each speed change and
    /// seek (seconds from the first frame, error in ms, speed change in ppm).
    static func soundStory(_ path: String) -> String {
        guard let records = try? records(path),
              let start = (records.first(where: { $0["type"] as? String == "frame" })?["presented_ns"] as? NSNumber)?.int64Value else {
            return "no presentation log"
        }
        let kinds: Set = ["audio-joined", "sync-adjust", "sync-seek", "item-started"]
        return records.filter { $0["type"] as? String == "event" && kinds.contains($0["event"] as? String ?? "") }.prefix(12).map { record in
            let at = Double(((record["at_ns"] as? NSNumber)?.int64Value ?? start) - start) / 1e9
            var words = [String(format: "%.2f", at), record["event"] as? String ?? ""]
            if let error = record["error_s"] as? Double { words.append(String(format: "%.1fms", error * 1000)) }
            if let rate = record["rate_ppm"] as? Int { words.append("\(rate)ppm") }
            return words.joined(separator: " ")
        }.joined(separator: ", ")
    }
}

/// A private PulseAudio server with one stereo null sink whose left and right channels are two
/// mono sinks, `left` and `right`, recorded together: two screens' sound in one file, sample for
/// sample, with no timestamps to trust.
final class PulseRecording {
    static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/pulseaudio") && FileManager.default.isExecutableFile(atPath: "/usr/bin/parec")
            && ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"].contains {
                FileManager.default.fileExists(atPath: "\($0)/alsa-lib/libasound_module_pcm_pulse.so")
            }
    }

    let directory: String
    let server: ChildProcess
    var socket: String { directory + "/pulse-native" }
    /// An ALSA configuration file defining the PCMs `left` and `right`.
    let alsaConfiguration: String

    init(directory: String) throws {
        self.directory = directory
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = directory
        environment["HOME"] = directory
        server = try ChildProcess(executable: "/usr/bin/pulseaudio", arguments: [
            "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--disable-shm=yes",
            "-L", "module-null-sink sink_name=mix channels=2 rate=48000",
            "-L", "module-remap-sink sink_name=left master=mix channels=1 channel_map=mono master_channel_map=front-left remix=no",
            "-L", "module-remap-sink sink_name=right master=mix channels=1 channel_map=mono master_channel_map=front-right remix=no",
            "-L", "module-native-protocol-unix auth-anonymous=1 socket=\(directory)/pulse-native",
        ], environment: environment, standardError: directory + "/pulse.err")
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: directory + "/pulse-native") {
            guard Date() < deadline, server.isRunning else {
                throw PulseError(description: "pulseaudio: " + ((try? String(contentsOfFile: directory + "/pulse.err", encoding: .utf8)) ?? "no socket"))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        alsaConfiguration = directory + "/asoundrc"
        try """
            pcm.left { type pulse server "unix:\(directory)/pulse-native" device "left" }
            pcm.right { type pulse server "unix:\(directory)/pulse-native" device "right" }
            """.write(toFile: alsaConfiguration, atomically: true, encoding: .utf8)
    }

    deinit { server.terminate(SIGKILL) }

    /// Starts recording the two channels into `path` (raw 48 kHz stereo s16); waits until it records.
    func record(to path: String) throws -> ChildProcess {
        let recorder = try ChildProcess(executable: "/usr/bin/parec", arguments: [
            "--server=unix:\(socket)", "--device=mix.monitor", "--format=s16le", "--rate=48000", "--channels=2", "--raw",
            "--latency-msec=20", path,
        ], standardError: directory + "/parec.err")
        let deadline = Date().addingTimeInterval(30)
        while ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) == 0 {
            guard Date() < deadline, recorder.isRunning else {
                throw PulseError(description: "parec: " + ((try? String(contentsOfFile: directory + "/parec.err", encoding: .utf8)) ?? "no output"))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return recorder
    }
}

struct PulseError: Error, CustomStringConvertible {
    var description: String
}
