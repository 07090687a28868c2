import Foundation
import MediaTime
import MediaSinks
@testable import Playback
import SinkDoubles
import Testing

/// The engine's clocks: a sound device that starts late, timed starts, and a player that follows
/// the wall clock — on the manual clock with recording sinks, so every figure is exact.
@Suite("Following a clock")
struct ClockFollowingTests {
    static let second = MediaTime(value: 1, timescale: 1)
    static let millisecond = MediaTime(value: 1, timescale: 1000)

    /// The presentation log's records, as they come.
    final class Records: Sendable {
        private let all = Collector<PresentationRecord>()
        func append(_ record: PresentationRecord) { all.append(record) }
        var frames: [PresentedFrame] { all.values.compactMap { if case .frame(let frame) = $0 { frame } else { nil } } }
        var events: [PresentationEvent] { all.values.compactMap { if case .event(let event) = $0 { event } else { nil } } }
        func events(_ kind: PresentationEvent.Kind) -> [PresentationEvent] { events.filter { $0.kind == kind } }
    }

    /// A player on a 60 Hz recording display (and sound, when asked) following the wall clock.
    struct Rig {
        let clock = ManualClock(start: .nanoseconds(1_000_000_000))
        let video: RecordingVideoSink
        let audio: RecordingAudioSink?
        let records = Records()

        init(audio withAudio: Bool, audioStartDelay: MediaTime = .zero) {
            video = RecordingVideoSink(clock: clock, refreshInterval: MediaTime(value: 1, timescale: 60))
            audio = withAudio ? RecordingAudioSink(clock: clock, startDelay: audioStartDelay) : nil
        }

        func player(_ items: [PlayerItem], source: PlaybackSourceClock) -> QueuePlayer {
            let player = QueuePlayer(items: [], videoSink: video, audioSink: audio, clock: clock)
            player.sourceClock = source
            let records = self.records
            player.setPresentationHandler { records.append($0) }
            for item in items { player.insert(item, after: nil) }
            return player
        }

        /// Runs refreshes for `duration` of host time.
        func run(for duration: MediaTime) {
            let end = clock.now() + duration
            video.run(until: { clock.now() >= end }, maxRefreshes: 1_000_000)
        }
    }

    static func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, preferredTimescale: 1_000_000) }

    // MARK: The follower's decisions

    @Test("the follower eases an error out at most 0.5 % faster or slower, and seeks only past 100 ms held for three refreshes")
    func followerDecisions() {
        var follower = ClockFollower()
        let refresh = MediaTime(value: 1, timescale: 60)
        var host = Self.second
        // 80 ms ahead: slow down, capped at 0.5 %, one log line.
        #expect(follower.measure(error: 0.080, at: host) == .adjust(-0.005, log: true))
        host = host + refresh
        #expect(follower.measure(error: 0.080, at: host) == .none)
        // Two refreshes past the threshold (a glitch), then back: no seek.
        #expect(follower.measure(error: 0.150, at: host + refresh) == .none)
        #expect(follower.measure(error: -0.150, at: host + refresh * 2) == .none)
        #expect(follower.measure(error: 0.079, at: host + refresh * 3) == .none)
        // Three in a row: seek.
        #expect(follower.measure(error: 0.5, at: host + refresh * 4) == .none)
        #expect(follower.measure(error: 0.5, at: host + refresh * 5) == .none)
        #expect(follower.measure(error: 0.5, at: host + refresh * 6) == .seek)
        // An error within 0.25 ms gets no push; a larger one steers in proportion (error / 2 s),
        // in steps of 10 ppm.
        var small = ClockFollower()
        #expect(small.measure(error: -0.000_2, at: host) == .none)
        var larger = ClockFollower()
        #expect(larger.measure(error: -0.002, at: host) == .adjust(0.001, log: true))
        // A steady drift is learned: a clock running 80 ppm fast ends with the error gone and the
        // follower slowing it by 80 ppm without a push.
        var drifting = ClockFollower()
        var error = 0.0
        var at = host
        for _ in 0..<(60 * 120) {
            _ = drifting.measure(error: error, at: at)
            error += (0.000_08 + drifting.adjustment) / 60
            at = at + refresh
        }
        #expect(abs(error) < 0.000_25, "error \(error * 1000) ms after two minutes")
        #expect(drifting.drift < -0.000_04 && drifting.drift > -0.000_1, "learned \(drifting.drift * 1e6) ppm")
    }

    /// Seeks onto the pin as the follower makes them, each taking `took` to show: each aims
    /// `aim` ahead and so shows `took - aim` behind the pin; one that shows more than the seek
    /// threshold behind is followed by another. Returns how many seeks it took to land, or nil.
    static func seeksToLand(_ estimate: inout SeekLatencyEstimate, took: MediaTime, within limit: Int = 20) -> Int? {
        for count in 1...limit {
            let behind = took - estimate.aim
            estimate.record(took: took)
            if behind <= MediaTime(value: 100, timescale: 1000) { return count }
        }
        return nil
    }

    @Test("the follower's seeks aim as far ahead as seeks take: slow every time is believed, one slow seek alone is not")
    func seekLatencyEstimate() {
        // A small machine seeking in a local file: the aim settles on what seeks take.
        var local = SeekLatencyEstimate()
        for _ in 0..<4 { local.record(took: Self.seconds(0.4)) }
        #expect(abs((local.aim - Self.seconds(0.4)).seconds) < 0.01, "aim \(local.aim.seconds) s")
        // A machine still busy booting (an emulated CPU), where every seek takes 8 s: the seeks
        // land on the pin after a few, instead of 3 s behind it each time for as long as it stays
        // that slow (the aim was capped at 5 s).
        var booting = SeekLatencyEstimate()
        let landed = Self.seeksToLand(&booting, took: Self.seconds(8))
        #expect(landed != nil && landed! <= 6, "landed after \(landed.map(String.init) ?? "never") seeks, aim \(booting.aim.seconds) s")
        // Slower still: believed up to 30 s.
        var stuck = SeekLatencyEstimate()
        for _ in 0..<10 { stuck.record(took: Self.seconds(45)) }
        #expect(abs((stuck.aim - Self.seconds(30)).seconds) < 0.01, "aim \(stuck.aim.seconds) s")
        // One seek that waited 20 s on a stalled read, among seeks of 0.4 s: the next aims no
        // more than 5 s ahead (its first picture held that long at most), and three fast ones
        // bring the aim back under half a second.
        var stalled = SeekLatencyEstimate()
        for _ in 0..<4 { stalled.record(took: Self.seconds(0.4)) }
        stalled.record(took: Self.seconds(20))
        #expect(stalled.aim <= Self.seconds(4), "aim \(stalled.aim.seconds) s after one slow seek")
        for _ in 0..<3 { stalled.record(took: Self.seconds(0.4)) }
        #expect(stalled.aim < Self.seconds(0.5), "aim \(stalled.aim.seconds) s after three fast seeks")
    }

    @Test("the sound joins the picture: it waits for a moving reading, asks for alignment past 1 ms, and gives the clock back when it stalls")
    func audioJoinDecisions() {
        var join = AudioJoin()
        let host = Self.second
        let reading = AudioClockReading(mediaTime: .zero, hostTime: host)
        // A device that has not consumed: its reading sits on the first sample.
        #expect(join.update(reading: reading, heard: .zero, picture: Self.seconds(0.5), firstSample: .zero, at: host) == .useDisplay)
        // It moves, 400 ms behind the picture: shift it.
        let moved = AudioClockReading(mediaTime: Self.seconds(0.1), hostTime: host + Self.seconds(0.1))
        #expect(join.update(reading: moved, heard: Self.seconds(0.1), picture: Self.seconds(0.5), firstSample: .zero, at: host + Self.seconds(0.1))
            == .align(to: Self.seconds(0.5)))
        // Before the alignment settles the display keeps the clock.
        let soon = AudioClockReading(mediaTime: Self.seconds(0.55), hostTime: host + Self.seconds(0.2))
        #expect(join.update(reading: soon, heard: Self.seconds(0.55), picture: Self.seconds(0.6), firstSample: .zero, at: host + Self.seconds(0.2))
            == .useDisplay)
        // Settled and within 1 ms: joined.
        let settled = AudioClockReading(mediaTime: Self.seconds(0.9005), hostTime: host + Self.seconds(0.5))
        #expect(join.update(reading: settled, heard: Self.seconds(0.9005), picture: Self.seconds(0.9), firstSample: .zero, at: host + Self.seconds(0.5))
            == .useAudio)
        #expect(join.isJoined)
        // The reading stops for more than half a second: the display takes the clock back.
        for step in 1...12 {
            let at = host + Self.seconds(0.5 + 0.05 * Double(step))
            _ = join.update(reading: settled, heard: Self.seconds(0.9005), picture: Self.seconds(0.9), firstSample: .zero, at: at)
        }
        #expect(!join.isJoined)
    }

    @Test("the sound joins only a device seen consuming: not on one reading past the first sample, nor on one that crawls")
    func audioJoinWaitsForAConsumingDevice() {
        var join = AudioJoin()
        let host = Self.second
        // A sound server starting: the first reading, extrapolated from its first report, is
        // already past the first sample and matches the picture…
        let first = AudioClockReading(mediaTime: Self.seconds(0.038), hostTime: host)
        #expect(join.update(reading: first, heard: Self.seconds(0.038), picture: Self.seconds(0.038), firstSample: .zero, at: host)
            == .useDisplay)
        // …then stands nearly still while the device fills its buffer (1.7 ms in 40 ms).
        let crawl = AudioClockReading(mediaTime: Self.seconds(0.0397), hostTime: host + Self.seconds(0.04))
        #expect(join.update(reading: crawl, heard: Self.seconds(0.0397), picture: Self.seconds(0.078), firstSample: .zero, at: host + Self.seconds(0.04))
            == .useDisplay)
        // Consuming now, 38 ms behind the picture: shifted, not taken as it is.
        let steady = AudioClockReading(mediaTime: Self.seconds(0.0797), hostTime: host + Self.seconds(0.08))
        #expect(join.update(reading: steady, heard: Self.seconds(0.0797), picture: Self.seconds(0.118), firstSample: .zero, at: host + Self.seconds(0.08))
            == .align(to: Self.seconds(0.118)))
        #expect(!join.isJoined)
        // Sound that comes before the picture has a timeline starts it: one look is enough.
        var soundFirst = AudioJoin()
        #expect(soundFirst.update(reading: first, heard: Self.seconds(0.038), picture: nil, firstSample: .zero, at: host) == .useAudio)
    }

    // MARK: A late sound device

    @Test("a sound device that starts 1.5 s late: the first frame shows at once, the picture moves, the sound joins it in step")
    func lateAudioDevice() throws {
        let rig = Rig(audio: true, audioStartDelay: Self.seconds(1.5))
        let player = rig.player([PlayerItem(url: Fixtures.path("h264_aac.mp4"))], source: .audioOutput)
        defer { player.invalidate() }
        player.play()
        let started = rig.clock.now()
        #expect(rig.video.run(until: { !rig.records.frames.isEmpty }, maxRefreshes: 600))
        let first = try #require(rig.records.frames.first)
        // Within a refresh or two of the item being ready, not after the device's 1.5 s.
        #expect(first.presentedAt - started < Self.seconds(0.5), "first frame after \((first.presentedAt - started).seconds) s")
        // The picture runs while the device sleeps: about 25 frames a second.
        rig.run(for: Self.seconds(1.2))
        let early = rig.records.frames.filter { $0.presentedAt < started + Self.seconds(1.4) }
        #expect(early.count >= 25, "only \(early.count) frames before the sound device started")
        // The sound joins once the device consumes, shifted onto the picture's time.
        rig.run(for: Self.seconds(2))
        let joined = try #require(rig.records.events(.audioJoined).first, "the sound never joined")
        #expect(joined.at - started < Self.seconds(2.6))
        let aligned = rig.audio!.alignedFrames
        #expect(aligned.dropped > 48_000, "dropped \(aligned.dropped) frames of sound: the picture was 1.5 s ahead")
        // From then on the sound is the clock, and each frame shows on the first refresh its time has come.
        let after = rig.records.frames.filter { $0.presentedAt > joined.at + Self.seconds(0.1) }
        #expect(after.count > 20)
        for frame in after {
            let offset = try #require(frame.audioClock, "frame \(frame.presentationTime) not on the sound's clock") - frame.presentationTime
            #expect(offset >= .zero - Self.millisecond && offset < MediaTime(value: 1, timescale: 60), "A-V \(offset.seconds) s at \(frame.presentationTime)")
        }
    }

    // MARK: Timed starts

    @Test("preroll, then setRate(time:atHostTime:): the frame at the time shows first and holds; the clock starts at the host time")
    func timedStart() throws {
        let rig = Rig(audio: false)
        let item = PlayerItem(url: Fixtures.path("h264_aac.mp4"))
        item.isAudioEnabled = false
        let player = rig.player([item], source: .audioOutput)
        defer { player.invalidate() }
        let prerolled = Collector<Bool>()
        player.preroll(atRate: 1) { prerolled.append($0) }
        // Paused, the engine has nothing due, so refreshes do not wait for the decoder: give the
        // preroll real time (a count of refreshes ran out in 47 ms on a loaded host).
        let deadline = Date().addingTimeInterval(20)
        while prerolled.values.isEmpty && Date() < deadline {
            rig.video.step()
            usleep(2_000)
        }
        #expect(prerolled.values == [true])
        // Paused, the display shows the item's first frame; what counts comes after the timed start.
        let before = rig.records.frames.count
        let start = rig.clock.now() + Self.seconds(0.5)
        let target = MediaTime(value: 2, timescale: 1)
        player.setRate(1, time: target, atHostTime: start)
        rig.run(for: Self.seconds(1.5))
        let frames = Array(rig.records.frames.dropFirst(before))
        let first = try #require(frames.first)
        #expect(first.presentationTime == target)
        #expect(first.presentedAt <= start, "the frame at the start time was not shown ahead of it")
        // Every later frame on the first refresh at or after start + (pts - target).
        for frame in frames.dropFirst() {
            let due = start + (frame.presentationTime - target)
            #expect(frame.presentedAt >= due && frame.presentedAt - due < MediaTime(value: 1, timescale: 60),
                    "\(frame.presentationTime.seconds) due \(due.seconds) shown \(frame.presentedAt.seconds)")
        }
        #expect(frames.count >= 24)
    }

    @Test("preroll answers false when its item stops being current first")
    func prerollCancelled() {
        let rig = Rig(audio: false)
        let player = rig.player([PlayerItem(url: Fixtures.path("queue1.mp4"))], source: .audioOutput)
        defer { player.invalidate() }
        let answers = Collector<Bool>()
        player.preroll(atRate: 1) { answers.append($0) }
        player.replaceCurrentItem(with: PlayerItem(url: Fixtures.path("queue2.mp4")))
        settle { !answers.values.isEmpty }
        #expect(answers.values.first == false)
    }

    // MARK: The wall clock

    /// A player on the wall clock whose item's time 0 is due `lead` from now; returns the pin.
    static func pinned(_ rig: Rig, audio: Bool, lead: MediaTime = .zero) -> (QueuePlayer, WallClockPin) {
        let item = PlayerItem(url: Fixtures.path("sync.mp4"))
        if !audio { item.isAudioEnabled = false }
        let pin = WallClockPin(time: .zero, wallClockTime: rig.clock.wallClockNow() + lead)
        item.wallClockPin = pin
        let player = rig.player([item], source: .wallClock(offset: .zero))
        player.play()
        return (player, pin)
    }

    /// How far each frame was from its pinned wall-clock time when presented (positive: late).
    static func lateness(_ frames: [PresentedFrame], pin: WallClockPin) -> [(frame: PresentedFrame, late: MediaTime)] {
        frames.compactMap { frame in
            frame.presentedWallClockTime.map { (frame, $0 - (pin.wallClockTime + (frame.presentationTime - pin.time))) }
        }
    }

    @Test("pinned on the wall clock, every frame shows on the first refresh at or after its wall-clock time")
    func pinnedFrames() throws {
        let rig = Rig(audio: false)
        let (player, pin) = Self.pinned(rig, audio: false, lead: Self.seconds(0.5))
        defer { player.invalidate() }
        rig.run(for: Self.seconds(4))
        let frames = rig.records.frames
        #expect(frames.count >= 85)
        // The first frame shows as soon as it is decoded (ahead of its time, held); the rest on time.
        for (frame, late) in Self.lateness(Array(frames.dropFirst()), pin: pin) {
            #expect(late >= .zero && late < MediaTime(value: 1, timescale: 60), "\(frame.presentationTime.seconds) late by \(late.seconds) s")
        }
        #expect(rig.records.events(.syncSeek).isEmpty && rig.records.events(.syncAdjust).isEmpty)
    }

    @Test("an item whose pin has passed joins its timeline where the wall clock is: frames before it are skipped, not dropped",
          arguments: [1.3, 0.08])
    func lateJoin(late: Double) throws {
        let rig = Rig(audio: false)
        let (player, pin) = Self.pinned(rig, audio: false, lead: Self.seconds(-late))
        defer { player.invalidate() }
        rig.run(for: Self.seconds(3))
        let frames = rig.records.frames
        let first = try #require(frames.first)
        // The first frame is the one the wall clock is at (within a frame of 40 ms), not time 0:
        // 1.3 s late it seeks there (past the follower's 100 ms), 80 ms late it skips the frames before.
        #expect(first.presentationTime >= Self.seconds(late - 0.04), "joined at \(first.presentationTime.seconds) s")
        #expect((rig.records.events(.syncSeek).count == 1) == (late > 0.1))
        // A start inside the item skips what lies before it; nothing due on screen was missed.
        #expect(frames.allSatisfy { $0.droppedFrames == 0 }, "dropped \(frames.last?.droppedFrames ?? 0)")
        for (frame, late) in Self.lateness(Array(frames.dropFirst()), pin: pin) {
            #expect(late >= .zero && late < MediaTime(value: 1, timescale: 60), "\(frame.presentationTime.seconds) late by \(late.seconds) s")
        }
        #expect(frames.count >= 40)
    }

    /// A gapless seam on the wall clock whose instant falls between two refreshes, before the
    /// sound has joined (a screen that starts just before a seam, or plays without sound): the
    /// next item's timeline goes on from the pin, not from the refresh its first frame showed at.
    /// Anchoring it on that refresh put the clock up to a refresh behind at every such seam
    /// (measured 4–23 ms at 25 Hz after a start 0.1–0.3 s before a loop's seam), eased out over
    /// seconds while two screens' sound drifted apart.
    @Test("a gapless seam between two refreshes keeps the timeline on its pin: the next item's frames show on time, with no correction",
          arguments: [false, true])
    func seamBetweenRefreshes(nextPinned: Bool) throws {
        let rig = Rig(audio: false)
        // The first item's last 0.4 s, due 0.5 s and a third of a refresh from now.
        let lead = Self.seconds(0.5 + 1.0 / 180)
        let first = PlayerItem(url: Fixtures.path("sync.mp4"))
        first.isAudioEnabled = false
        first.seek(to: Self.seconds(69.6), toleranceBefore: .zero, toleranceAfter: .zero)
        let pin = WallClockPin(time: Self.seconds(69.6), wallClockTime: rig.clock.wallClockNow() + lead)
        first.wallClockPin = pin
        let next = PlayerItem(url: Fixtures.path("sync.mp4"))
        next.isAudioEnabled = false
        // Where the first item's timeline puts the next one's start (70 s, its end).
        let seam = pin.wallClockTime + Self.seconds(0.4)
        if nextPinned { next.wallClockPin = WallClockPin(time: .zero, wallClockTime: seam) }
        let player = rig.player([first, next], source: .wallClock(offset: .zero))
        defer { player.invalidate() }
        player.play()
        rig.run(for: Self.seconds(3))
        let frames = rig.records.frames
        let after = frames.filter { $0.itemIndex == 1 }
        #expect(after.count >= 50, "\(after.count) frames of the next item")
        #expect(after.first?.presentationTime == .zero)
        for (frame, late) in Self.lateness(after, pin: WallClockPin(time: .zero, wallClockTime: seam)) {
            #expect(late >= .zero && late < MediaTime(value: 1, timescale: 60), "\(frame.presentationTime.seconds) late by \(late.seconds) s")
        }
        #expect(rig.records.events(.syncAdjust).isEmpty, "\(rig.records.events(.syncAdjust).map { ($0.error?.seconds, $0.adjustment) })")
        #expect(rig.records.events(.syncSeek).isEmpty)
        #expect(frames.allSatisfy { $0.droppedFrames == 0 })
    }

    @Test("a wall-clock step of 80 ms is eased out by retiming the picture, without a seek; one of 2 s is one seek")
    func wallClockStepsWithoutSound() throws {
        let rig = Rig(audio: false)
        let (player, pin) = Self.pinned(rig, audio: false)
        defer { player.invalidate() }
        rig.run(for: Self.seconds(3))
        let before = rig.records.frames.count
        rig.clock.stepWallClock(by: Self.seconds(0.08))
        rig.run(for: Self.seconds(25))
        #expect(rig.records.events(.syncSeek).isEmpty)
        let adjustments = rig.records.events(.syncAdjust)
        // The error is averaged before it steers, so the speed-up ramps to its 0.5 % limit.
        #expect(adjustments.contains { $0.adjustment == 0.005 }, "the picture runs 0.5 % fast to catch up 80 ms: \(adjustments.map(\.adjustment))")
        // Eased in, not swung through: at most a slight overshoot (0.05 %) on the way in.
        #expect(adjustments.allSatisfy { ($0.adjustment ?? 1) >= -0.000_5 }, "\(adjustments.map(\.adjustment))")
        // In order, none twice, about as many frames as time passed (retimed, not skipped).
        let frames = rig.records.frames
        let times = frames.map(\.presentationTime)
        #expect(times == times.sorted() && Set(times).count == times.count)
        #expect(frames.count - before >= 25 * 25 - 2)
        // Caught up: the last second's frames are on time again.
        let last = Self.lateness(frames.suffix(25), pin: pin)
        for (frame, late) in last {
            #expect(late >= -Self.millisecond && late < MediaTime(value: 1, timescale: 60) + Self.millisecond,
                    "\(frame.presentationTime.seconds) late by \(late.seconds) s")
        }

        rig.clock.stepWallClock(by: Self.seconds(2))
        rig.run(for: Self.seconds(4))
        let seeks = rig.records.events(.syncSeek)
        #expect(seeks.count == 1, "\(seeks.count) seeks")
        let error = try #require(seeks.first?.error)
        #expect(abs(error.seconds + 2) < 0.05, "the seek measured \(error.seconds) s")
        for (frame, late) in Self.lateness(rig.records.frames.suffix(25), pin: pin) {
            #expect(late >= -Self.millisecond && late < MediaTime(value: 1, timescale: 60) + Self.millisecond,
                    "\(frame.presentationTime.seconds) late by \(late.seconds) s after the seek")
        }
    }

    @Test("with sound, an 80 ms step is eased out by resampling: no flush, no seek, and the sound ends in step with the wall clock")
    func wallClockStepWithSound() throws {
        let rig = Rig(audio: true)
        let (player, pin) = Self.pinned(rig, audio: true)
        defer { player.invalidate() }
        rig.run(for: Self.seconds(3))
        #expect(!rig.records.events(.audioJoined).isEmpty)
        let flushes = rig.audio!.flushCount
        let aligned = rig.audio!.alignedFrames
        rig.clock.stepWallClock(by: Self.seconds(0.08))
        rig.run(for: Self.seconds(30))
        #expect(rig.records.events(.syncSeek).isEmpty)
        #expect(rig.audio!.flushCount == flushes, "the sound was flushed")
        #expect(rig.audio!.alignedFrames == aligned, "samples were dropped or silence inserted")
        #expect(rig.records.events(.syncAdjust).contains { $0.adjustment == 0.005 })
        // The sound's clock, at the last frames, is where the wall clock says.
        for frame in rig.records.frames.suffix(25) {
            let audio = try #require(frame.audioClock)
            let wall = try #require(frame.presentedWallClockTime)
            let error = audio - (pin.time + (wall - pin.wallClockTime))
            #expect(abs(error.seconds) < 0.002, "sound \(error.seconds) s off the wall clock at \(frame.presentationTime.seconds)")
        }
    }
}

extension ClockFollower.Decision: CustomTestStringConvertible {
    public var testDescription: String {
        switch self {
        case .none: "none"
        case .adjust(let value, let log): "adjust(\(value), log: \(log))"
        case .seek: "seek"
        }
    }
}
