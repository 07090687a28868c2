import Displays
import Foundation
import MediaSinks
import MediaTime
import Playback
import ProcessMemory
import Scheduling
@testable import ShowRunner
import SinkDoubles
import Testing

/// A day of signage in a few minutes: the show on the real headless display (160x90 at 5 Hz) and a
/// recording sound sink, both stepped by one ``ManualClock``, so a simulated day runs as fast as
/// decoding and compositing allow and every refresh is deterministic.
@Suite("accelerated soak", .serialized,
       .enabled(if: Fixtures.available && SoakProgramme.available, "needs the generated fixtures (scripts/fixtures.sh) and ffprobe"),
       .enabled(if: ProcessInfo.processInfo.environment["VITRINE_SANITIZER"] == nil,
                "a simulated day takes minutes; under ThreadSanitizer it would take most of an hour, and its memory figures mean nothing there"))
struct AcceleratedSoakTests {
    /// Simulated hours: `VITRINE_SOAK_HOURS` (3…24); 7 in the suite (~5 minutes here: midnight to
    /// 07:00, with a broken file at 05:30 and the breakfast day part from 06:00), the whole day
    /// with `VITRINE_SOAK_HOURS=24` (~16 minutes).
    static let hours = min(24, max(3, ProcessInfo.processInfo.environment["VITRINE_SOAK_HOURS"].flatMap { Int($0) } ?? 7))
    /// 5 Hz, the clips' frame rate: a frame per refresh, a seam a refresh late shows.
    static let mode = DisplayMode(width: 160, height: 90, refreshMillihertz: 5_000)
    static let refreshesPerMinute = 300
    /// The show re-resolves its programme every simulated second (on a device: every 40 ms): an
    /// interrupt is on screen at the refresh after the first tick at or after its start.
    static let refreshesPerTick = 5
    static let start = UTCInstant.iso("2026-03-02T00:00:00Z")

    @Test("a simulated day (7 hours in the suite, 24 with VITRINE_SOAK_HOURS=24): over 400 item transitions an hour, an interrupt every 6 minutes, a new schedule file every hour (some broken) — every seam gapless, every interrupt at once over the last picture, every overlay on its cue frame; threads, file descriptors and RSS flat")
    func day() async throws {
        let began = Date()
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let programme = try SoakProgramme(directory: directory)
        // The first display a process opens leaves Mesa's llvmpipe screen and its rasterizer
        // threads (named after the render thread that made them) for the process's life: open
        // one first, so the baseline has them and what the show leaves is the show's.
        try HeadlessDisplay(mode: Self.mode, pacing: .manual, clock: ManualClock(start: .zero)).stop()
        let before = ProcessResources.sample()
        let descriptorsBefore = ProcessResources.descriptorTargets()

        let clock = ManualClock(start: MediaTime(value: 1, timescale: 1))
        let ledger = SoakLedger(setup: .init(refreshInterval: Self.mode.refreshInterval, gridOrigin: clock.now(),
                                             start: Self.start, hostStart: clock.now(),
                                             interruptLatency: Self.mode.refreshInterval * Int32(Self.refreshesPerTick + 1)))
        ledger.learn(cues: SoakProgramme.cues(revision: 0))
        // The sound of the clips that have it goes to a sink on the same clock, which keeps counts only.
        let sound = RecordingAudioSink(clock: clock, keepsBuffers: false)
        let show = try await ShowHarness(schedulePath: programme.path, startAt: Self.start, watchesFile: true, mode: Self.mode,
                                         audioSink: sound, clock: clock, records: { ledger.record($0) })
        let driver = SoakDriver(show: show, ledger: ledger)

        var samples: [ProcessResources] = []   // one per simulated minute
        var revision = 0
        for minute in 1...(Self.hours * 60) {
            for _ in 0..<Self.refreshesPerMinute { try driver.refresh() }
            samples.append(ProcessResources.sample())
            if minute % 60 == 30 {
                // Half past every hour: a new file. Valid ones take effect at the next item boundary;
                // broken ones are rejected and the show plays on as if nothing happened.
                revision += 1
                let broken = SoakProgramme.brokenHours[minute / 60]
                if broken == nil { ledger.learn(cues: SoakProgramme.cues(revision: revision)) }
                try await driver.replaceSchedule(programme.path, with: programme.text(revision: revision, broken: broken),
                                                 rejected: broken != nil)
            }
            if ledger.failureCount > 0 && minute % 60 == 0 { break }   // a broken show: report now, not in a day
        }
        let simulated = driver.refreshes
        show.stop()

        // After the show: its threads joined, its files closed.
        let settled = await ProcessResources.settle { sample in
            ProcessResources.showDescriptors(since: descriptorsBefore).isEmpty && sample.threads <= before.threads
        }
        let elapsed = Date().timeIntervalSince(began)

        // The hourly table, for the record.
        let hourly = (0..<(samples.count / 60)).map { hour in HourlySample(hour: hour, samples: samples[(hour * 60)..<((hour + 1) * 60)],
                                                                            counts: ledger.hour(hour)) }
        print(HourlySample.table(hourly, before: before, after: settled))
        print("accelerated soak: \(simulated) refreshes (\(simulated / (Self.refreshesPerMinute * 60)) simulated hours) in \(Int(elapsed)) s; "
              + "\(ledger.frames) frames, \(ledger.transitions) transitions (\(ledger.seams) seams, \(ledger.cuts) cuts), "
              + "\(ledger.overlaysChecked) overlays on their cue frame, \(ledger.wholePlays) items played whole, "
              + "\(ledger.interruptsStarted) interrupts, \(driver.screenshotsChecked) screenshots at cuts, "
              + "\(MediaTime.format(seconds: sound.enqueuedDuration.seconds, decimals: 1)) s of sound in \(sound.enqueuedBufferCount) buffers")

        // Every check the ledger and the driver made.
        #expect(ledger.failureCount == 0, "\(ledger.failureCount) failures, the first: \n\(ledger.failures.joined(separator: "\n"))")
        try #require(hourly.count == Self.hours, "the soak stopped after \(hourly.count) hours")
        let seconds = Self.hours * 3600
        #expect(ledger.transitions >= 10_000 * Self.hours / 24)
        #expect(ledger.cuts == driver.cutsChecked, "every cut came from a change of entry: \(ledger.cuts) cuts, \(driver.cutsChecked) seen at ticks and reloads")
        // The programme: every interrupt, the bulletin added at 10:30, the day parts the hours reach.
        #expect(ledger.interruptsStarted == SoakProgramme.interruptSeconds.filter { $0 < seconds }.count)
        #expect(ledger.started(entry: "bulletin") == (seconds > 10 * 3600 + 1800 ? 1 : 0))
        #expect(ledger.started(entry: "fallback") > 0)
        if seconds > 6 * 3600 { #expect(ledger.started(entry: "breakfast") > 0) }
        if seconds > 18 * 3600 { #expect(ledger.started(entry: "evening") > 0) }
        // Every overlay: the ledger checked each one shown; every item played whole showed all of its own.
        #expect(ledger.overlaysChecked > 10_000 * Self.hours / 24 && ledger.wholePlays > 8_000 * Self.hours / 24,
                "\(ledger.overlaysChecked) overlays, \(ledger.wholePlays) whole plays")
        // The files, one at half past every hour: the valid ones adopted, the broken ones rejected
        // with where they are wrong.
        let broken = SoakProgramme.brokenHours.keys.filter { $0 < Self.hours }.count
        #expect(ledger.count(.scheduleLoaded) == 1 + Self.hours - broken)
        #expect(ledger.count(.scheduleRejected) == broken)
        #expect(ledger.rejectedReasons.allSatisfy { $0.contains("soak.toml:") }, "\(ledger.rejectedReasons)")
        // The sound: the clips with a sound track were heard for as long as they were on screen.
        let heard = ledger.soundOnScreen
        #expect(sound.enqueuedDuration >= heard && sound.enqueuedDuration - heard < MediaTime(value: 60, timescale: 1),
                "sound enqueued \(sound.enqueuedDuration.seconds) s, on screen with sound \(heard.seconds) s")

        // Flat: the last hour's peaks no higher than the second hour's (RSS within 5 %).
        let second = hourly[1], last = hourly[hourly.count - 1]
        #expect(Double(last.residentPeak) <= Double(second.residentPeak) * 1.05,
                "RSS peak \(last.residentPeak / 1_048_576) MB in hour \(last.hour + 1), \(second.residentPeak / 1_048_576) MB in hour 2")
        // Threads and descriptors: typically no more in the last hour than in the first two. A
        // sample catches whichever item, preload and libavcodec workers are alive at that instant,
        // so an hour's peak moves by a thread or two from run to run (20-23 in one suite run); its
        // median is what a leak moves, a thread or descriptor more at every sample from then on.
        let early = hourly[0...1]
        #expect(last.threadsMedian <= early.map(\.threadsMedian).max()!,
                "threads: \(last.threadsMedian) typically in the last hour, \(early.map(\.threadsMedian)) in hours 1 and 2")
        #expect(last.fileDescriptorsMedian <= early.map(\.fileDescriptorsMedian).max()!,
                "file descriptors: \(last.fileDescriptorsMedian) typically in the last hour, \(early.map(\.fileDescriptorsMedian)) in hours 1 and 2")
        // And back to where they were before the show.
        let left = ProcessResources.showDescriptors(since: descriptorsBefore)
        #expect(left.isEmpty, "file descriptors: \(before.fileDescriptors) before the show, \(settled.fileDescriptors) after; the show's left open: \(left.sorted())")
        #expect(settled.threads <= before.threads, "the show's threads: \(before.threads) before the show, \(settled.threads) after: \(ProcessResources.showThreadNames())")
    }
}

/// Steps the show refresh by refresh and watches every cut: the show's tick or a reload replaced
/// what played; the last picture must stay on screen until the new item's first frame, which must
/// come at the very next refresh.
final class SoakDriver {
    struct Cut {
        /// The host time of the tick or reload that cut.
        var at: MediaTime
        var fromItem: Int
        var colour: SoakColour?
        var refreshes = 0
    }

    let show: ShowHarness
    let ledger: SoakLedger
    private(set) var refreshes = 0
    private(set) var cutsChecked = 0
    private(set) var screenshotsChecked = 0
    private var cut: Cut?
    /// Where the probe pixel is: the top half of the picture, which overlays leave alone.
    static let probe = (x: 80, y: 20)

    init(show: ShowHarness, ledger: SoakLedger) {
        self.show = show
        self.ledger = ledger
    }

    private var currentItem: ObjectIdentifier? { show.runner.player.currentItem.map(ObjectIdentifier.init) }

    /// One refresh, after waiting (real time) for the frames due; the show's tick every few.
    func refresh() throws {
        var waited = 0
        while show.runner.gate.isWaitingForData() {
            waited += 1
            if waited > 40_000 {
                ledger.fail("decoding did not catch up in 10 s (host \(show.clock.now().seconds) s)")
                break
            }
            usleep(250)
        }
        show.clock.advance(by: show.display.refreshInterval)
        _ = try show.display.refresh()
        refreshes += 1
        if cut != nil { try checkCut() }
        if refreshes % AcceleratedSoakTests.refreshesPerTick == 0 {
            let before = currentItem
            show.runner.tick()
            noteCut(from: before)
        }
    }

    /// Replaces the schedule file and waits (real time) until the show adopted or rejected it.
    func replaceSchedule(_ path: String, with text: String, rejected: Bool) async throws {
        let kind: PresentationEvent.Kind = rejected ? .scheduleRejected : .scheduleLoaded
        let count = ledger.count(kind)
        let before = currentItem
        try Fixtures.replace(path, with: text)
        let deadline = Date().addingTimeInterval(60)
        while ledger.count(kind) == count && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        if ledger.count(kind) == count { ledger.fail("the replaced schedule was not \(rejected ? "rejected" : "adopted") within 60 s") }
        // The show logs the adoption before it cuts over to an interrupt the new file starts now
        // (both on its queue): wait for that work to finish before looking at what plays.
        _ = show.runner.currentSchedule
        if rejected && currentItem != before { ledger.fail("a rejected schedule changed what plays") }
        noteCut(from: before)
    }

    private func noteCut(from before: ObjectIdentifier?) {
        guard currentItem != before, cut == nil, let last = ledger.lastFrame else { return }
        cut = Cut(at: show.clock.now(), fromItem: last.itemIndex, colour: SoakProgramme.colour(of: last.source))
    }

    private func checkCut() throws {
        guard var cut, let last = ledger.lastFrame else { return }
        let pixel = try show.display.screenshot().image.pixel(x: Self.probe.x, y: Self.probe.y)
        screenshotsChecked += 1
        if last.itemIndex > cut.fromItem {
            if last.presentedAt != cut.at + show.display.refreshInterval {
                ledger.fail("cut at \(cut.at.seconds) s: the new item's first frame came at \(last.presentedAt.seconds) s, not at the next refresh")
            }
            if SoakProgramme.colour(of: last.source)?.matches(pixel) != true {
                ledger.fail("cut at \(cut.at.seconds) s: the screen shows \(pixel), not the new item's (\(last.source)) picture")
            }
            self.cut = nil
            cutsChecked += 1
            return
        }
        if cut.colour?.matches(pixel) != true {
            ledger.fail("cut at \(cut.at.seconds) s: waiting for the new item, the screen shows \(pixel), not the last picture")
        }
        cut.refreshes += 1
        if cut.refreshes > 50 {
            ledger.fail("cut at \(cut.at.seconds) s: no new frame within 50 refreshes")
            self.cut = nil
        } else {
            self.cut = cut
        }
    }
}

/// The show's threads and open file descriptors and the process's resident memory, read from
/// /proc. The test process has threads and descriptors of its own that come and go with whatever
/// ran before (dispatch's and Swift concurrency's pools, their timer and event descriptors): the
/// show's threads are the named `vitrine-…` ones (libavcodec's workers inherit their creator's
/// name), its descriptors every other.
struct ProcessResources: Sendable {
    var threads: Int
    var fileDescriptors: Int
    var residentBytes: Int
    /// What the process's allocations hold (``ProcessMemory/heapInUse``): beside the resident
    /// size it tells growth (both rise) from fragmentation (resident rises, this does not).
    var heapInUseBytes: Int

    static func sample() -> ProcessResources {
        let threads = showThreadNames().count
        let descriptors = descriptorTargets().filter { !isRuntimeDescriptor($0) }.count
        // statm: size resident shared text lib data dt, in pages.
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return ProcessResources(threads: threads, fileDescriptors: descriptors, residentBytes: pages * Int(sysconf(Int32(_SC_PAGESIZE))),
                                heapInUseBytes: ProcessMemory.heapInUse)
    }

    /// The names of the show's threads alive now (`vitrine-decode`, ...).
    static func showThreadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }.filter { $0.hasPrefix("vitrine-") }.sorted()
    }

    /// What each open descriptor refers to (`/dev/dri/renderD128`, `anon_inode:inotify`, ...).
    static func descriptorTargets() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(names.compactMap { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")).map { "\(name) -> \($0)" }
        })
    }

    /// Descriptors open now that were not in `before`, other than the runtime's own event plumbing
    /// (dispatch's and Swift concurrency's timer, event and epoll descriptors, created the first time
    /// a worker sleeps, belong to the process): files, sockets, pipes, DRM nodes the show left open.
    static func showDescriptors(since before: Set<String>) -> Set<String> {
        descriptorTargets().subtracting(before).filter { !isRuntimeDescriptor($0) }
    }

    static func isRuntimeDescriptor(_ target: String) -> Bool {
        ["anon_inode:[timerfd]", "anon_inode:[eventfd]", "anon_inode:[eventpoll]"].contains { target.hasSuffix($0) }
    }

    /// Samples until `condition` holds or ten seconds pass; returns the last sample.
    static func settle(_ condition: (ProcessResources) -> Bool) async -> ProcessResources {
        let deadline = Date().addingTimeInterval(10)
        var sample = sample()
        while !condition(sample) && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(50))
            sample = self.sample()
        }
        return sample
    }
}

/// One simulated hour of the soak: its peaks (sampled every simulated minute) and its counts.
struct HourlySample {
    var hour: Int
    var threadsPeak: Int
    var fileDescriptorsPeak: Int
    var residentPeak: Int
    var heapInUsePeak: Int
    var threadsMedian: Int
    var fileDescriptorsMedian: Int
    var counts: SoakLedger.Hour

    init(hour: Int, samples: ArraySlice<ProcessResources>, counts: SoakLedger.Hour) {
        self.hour = hour
        threadsPeak = samples.map(\.threads).max() ?? 0
        fileDescriptorsPeak = samples.map(\.fileDescriptors).max() ?? 0
        residentPeak = samples.map(\.residentBytes).max() ?? 0
        heapInUsePeak = samples.map(\.heapInUseBytes).max() ?? 0
        threadsMedian = Self.median(samples.map(\.threads))
        fileDescriptorsMedian = Self.median(samples.map(\.fileDescriptors))
        self.counts = counts
    }

    static func median(_ values: [Int]) -> Int {
        values.isEmpty ? 0 : values.sorted()[values.count / 2]
    }

    static func table(_ hours: [HourlySample], before: ProcessResources, after: ProcessResources) -> String {
        func cell(_ value: CustomStringConvertible, _ width: Int) -> String {
            let text = value.description
            return String(repeating: " ", count: max(0, width - text.count)) + text
        }
        func megabytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
        let widths = [6, 12, 7, 6, 10, 8, 14, 10, 14, 14, 21]
        func row(_ values: [CustomStringConvertible]) -> String { zip(values, widths).map { cell($0, $1) }.joined() }
        var lines = [row(["hour", "transitions", "seams", "cuts", "overlays", "frames", "threads(max)", "fds(max)", "rss-peak(MB)",
                          "heap-peak(MB)", "threads/fds(median)"])]
        lines.append(row(["before", "", "", "", "", "", before.threads, before.fileDescriptors, megabytes(before.residentBytes),
                         megabytes(before.heapInUseBytes), ""]))
        for h in hours {
            lines.append(row([h.hour + 1, h.counts.transitions, h.counts.seams, h.counts.cuts, h.counts.overlays, h.counts.frames,
                              h.threadsPeak, h.fileDescriptorsPeak, megabytes(h.residentPeak),
                              megabytes(h.heapInUsePeak), "\(h.threadsMedian)/\(h.fileDescriptorsMedian)"]))
        }
        lines.append(row(["after", "", "", "", "", "", after.threads, after.fileDescriptors, megabytes(after.residentBytes),
                         megabytes(after.heapInUseBytes), ""]))
        return lines.joined(separator: "\n")
    }
}
