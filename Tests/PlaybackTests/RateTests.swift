#if canImport(Glibc)
import Glibc
#endif
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

@Suite("Rates and events")
struct RateTests {
    func run(rate: Double, refreshes: Int, audio: Bool = false, refreshRate: Int32 = 60) -> (Harness, Player) {
        let harness = Harness(refreshRate: refreshRate, audio: audio)
        let item = PlayerItem(url: Fixtures.path("h264_aac.mp4"))
        if !audio { item.isAudioEnabled = false }
        let player = harness.player(item)
        player.rate = rate
        harness.video.run(refreshes: refreshes)
        return (harness, player)
    }

    @Test("at rate 2 time runs twice as fast: late frames are dropped and counted, order kept")
    func doubleRate() {
        // A 25 Hz display: at 2x, 50 frames of media pass each second, so every other one is late.
        let (harness, player) = run(rate: 2, refreshes: 50, refreshRate: 25)
        defer { player.invalidate() }
        let times = harness.shownTimes
        #expect(times == times.sorted())
        #expect(Set(times).count == times.count)
        // 2 s of refreshes at 2x: 4 s of media, every second frame shown.
        let reference = Fixtures.videoFrames("h264_aac.mp4").map(\.presentationTime)
        #expect(times == stride(from: 0, to: 100, by: 2).map { reference[$0] })
        #expect(player.droppedFrameCount == 49)
        // Every frame that may be due was decoded when asked for: the decoder never left the
        // engine waiting out the sink's bound (a decoder refilling in bursts once did, 18 times).
        #expect(harness.video.pacingTimeouts == 0, "\(harness.video.pacingTimeouts)")
    }

    @Test("at rate 0.5 every frame is shown, each for twice as long")
    func halfRate() {
        let (harness, player) = run(rate: 0.5, refreshes: 240)
        defer { player.invalidate() }
        let reference = Fixtures.videoFrames("h264_aac.mp4").map(\.presentationTime)
        let times = harness.shownTimes
        #expect(times == Array(reference.prefix(times.count)))
        #expect(times.count >= 49 && times.count <= 51)
        #expect(player.droppedFrameCount == 0)
    }

    @Test("off rate 1 audio is muted, not stretched; back at 1 it plays again")
    func audioMutedOffRateOne() {
        let (harness, player) = run(rate: 2, refreshes: 60, audio: true)
        defer { player.invalidate() }
        let enqueuedAtDouble = harness.audio!.recordedBuffers.count
        harness.video.run(refreshes: 60)
        #expect(harness.audio!.recordedBuffers.count == enqueuedAtDouble)
        player.rate = 1
        harness.video.run(refreshes: 60)
        #expect(harness.audio!.recordedBuffers.count > enqueuedAtDouble)
    }

    @Test("events arrive as an AsyncSequence: rate changes, item status, end of item")
    func eventsSequence() async {
        let harness = Harness()
        let item = PlayerItem(url: Fixtures.path("queue1.mp4"))
        let player = harness.player(item)
        defer { player.invalidate() }
        let events = player.events
        let collected = Task {
            var names: [String] = []
            for await event in events {
                switch event {
                case .rateChanged(let rate): names.append("rate \(rate)")
                case .itemStatusChanged(_, let status): names.append("item \(status.rawValue)")
                case .didPlayToEndTime: names.append("end"); return names
                default: break
                }
            }
            return names
        }
        for await status in item.statusUpdates where status != .unknown { break }
        player.play()
        harness.video.run(until: { player.rate == 0 }, maxRefreshes: 1_000)
        let names = await collected.value
        #expect(names.contains("rate 1.0"))
        #expect(names.last == "end")
        #expect(player.currentTime() == MediaTime(value: 2, timescale: 1))
    }

    @Test("currentTime follows presented time while playing and stops when paused")
    func currentTime() {
        let (harness, player) = run(rate: 1, refreshes: 61)
        defer { player.invalidate() }
        let time = player.currentTime()
        #expect(time >= MediaTime(value: 1, timescale: 1) && time < MediaTime(value: 11, timescale: 10))
        player.pause()
        let paused = player.currentTime()
        harness.video.run(refreshes: 30)
        #expect(player.currentTime() == paused)
    }
}

@Suite("Presentation log")
struct PresentationLogTests {
    @Test("frame and event lines have the documented fields")
    func lineFormat() {
        let frame = PresentedFrame(
            itemIndex: 2, source: "a \"b\".mp4", presentationTime: MediaTime(value: 512, timescale: 12800),
            presentedAt: .nanoseconds(1_500_000_000), refresh: 7, clock: MediaTime(value: 1, timescale: 20), audioClock: nil,
            droppedFrames: 3)
        #expect(PresentationLogWriter.line(for: .frame(frame))
            == #"{"type":"frame","item":2,"source":"a \"b\".mp4","pts":[512,12800],"pts_s":0.040000,"presented_ns":1500000000,"refresh":7,"dropped":3,"clock_s":0.050000}"#)
        let event = PresentationEvent(kind: .itemFailed, itemIndex: 1, source: "x.mp4", time: nil, at: .nanoseconds(5), reason: "x.mp4: cannot open: no such file")
        #expect(PresentationLogWriter.line(for: .event(event))
            == #"{"type":"event","event":"item_failed","item":1,"source":"x.mp4","at_ns":5,"reason":"x.mp4: cannot open: no such file"}"#)
    }

    @Test("each record reaches the file as it is written, before the log is closed")
    func recordsAreVisibleAtOnce() throws {
        let path = "/tmp/vitrine-presentation-log-\(getpid()).jsonl"
        defer { unlink(path) }
        let writer = try PresentationLogWriter(path: path)
        defer { writer.close() }
        let event = PresentationEvent(kind: .itemReady, itemIndex: 0, source: "a.mp4", time: .zero, at: .nanoseconds(1), reason: nil)
        writer.write(.event(event))
        // A reader following the log (the VM proof waits for the first frame this way) sees the line now.
        let text = try #require(readWholeFile(path))
        #expect(text == PresentationLogWriter.line(for: .event(event)) + "\n")
    }

    private func readWholeFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
