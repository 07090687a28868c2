import ChildProcesses
import Foundation
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

@Suite("Network sources")
struct NetworkTests {
    /// A local HTTP server over the fixtures (Python's), stopped when the test ends.
    final class FixtureServer {
        let process: ChildProcess
        let port = Int.random(in: 20_000..<40_000)

        init() throws {
            process = try ChildProcess(executable: "python3", arguments: [
                "-m", "http.server", String(port), "--bind", "127.0.0.1",
                "--directory", Fixtures.root.appendingPathComponent("Fixtures/generated").path])
            try Fixtures.waitUntilServing(url("mpeg2.ts"), process: process)
        }

        func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

        deinit { process.terminate(SIGKILL) }
    }

    @Test("an HTTP stream plays every frame, and its loaded range grows to the end")
    func httpStream() throws {
        _ = Fixtures.path("mpeg2.ts")
        let server = try FixtureServer()
        let harness = Harness(refreshRate: 25)
        let item = PlayerItem(url: server.url("mpeg2.ts"))
        item.isAudioEnabled = false
        let player = harness.player(item)
        defer { player.invalidate() }
        player.play()
        var loaded: [MediaTime] = []
        harness.video.run(until: {
            if let range = item.loadedTimeRanges.first { loaded.append(range.end) }
            return player.rate == 0
        }, maxRefreshes: 1_000)
        #expect(item.status == .readyToPlay)
        #expect(harness.video.presentations.count == 75)
        #expect(loaded == loaded.sorted())
        // Over HTTP the TS duration is unknown (indefinite); the loaded range still reaches the
        // end of the last frame.
        let lastFrame = try #require(harness.video.presentations.last).presentationTime
        #expect(loaded.last.map { $0 > lastFrame } == true, "\(loaded.last.map(\.seconds) ?? -1)")
        #expect(loaded.first.map { $0 < lastFrame } == true)
    }

    @Test("a server that refuses fails the item with a network error naming the URL")
    func refusedConnection() async {
        let harness = Harness()
        let url = "http://127.0.0.1:9/nothing.mp4"
        let item = PlayerItem(url: url)
        let updates = item.statusUpdates
        let player = harness.player(item)
        defer { player.invalidate() }
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next() == .failed)
        #expect(item.error?.description.contains(url) == true)
    }

    /// An HTTP server over one fixture that sends its first `heldAfter` bytes at once, then holds the
    /// rest until ``release()``: a network source that stalls part-way and recovers.
    final class GatedServer {
        let process: ChildProcess
        let port = Int.random(in: 40_000..<60_000)
        let gate = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-gate-\(UUID().uuidString)").path

        static let script = """
            import http.server, os, sys, time
            path, port, held, gate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
            data = open(path, 'rb').read()
            class Handler(http.server.BaseHTTPRequestHandler):
                def head(self):
                    self.send_response(200)
                    self.send_header('Content-Type', 'video/mp2t')
                    self.send_header('Content-Length', str(len(data)))
                    self.end_headers()
                def do_HEAD(self):
                    self.head()
                def do_GET(self):
                    self.head()
                    self.wfile.write(data[:held])
                    self.wfile.flush()
                    while not os.path.exists(gate):
                        time.sleep(0.01)
                    self.wfile.write(data[held:])
                def log_message(self, *args):
                    pass
            http.server.ThreadingHTTPServer(('127.0.0.1', port), Handler).serve_forever()
            """

        init(fixture: String, heldFraction: Double) throws {
            let path = Fixtures.path(fixture)
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            process = try ChildProcess(executable: "python3", arguments: [
                "-c", Self.script, path, String(port), String(Int(Double(size) * heldFraction)), gate])
            // Ready when it answers a HEAD request (a GET would wait at the gate).
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if Fixtures.run("/usr/bin/curl", ["-s", "-I", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code}", url]) == "200" { return }
                guard process.isRunning else { throw Fixtures.ServerError(description: "the gated HTTP server exited before serving \(url)") }
                usleep(50_000)
            }
            throw Fixtures.ServerError(description: "the gated HTTP server did not serve \(url) within 60 s")
        }

        var url: String { "http://127.0.0.1:\(port)/stream.ts" }

        func release() { _ = FileManager.default.createFile(atPath: gate, contents: Data()) }

        deinit {
            process.terminate(SIGKILL)
            try? FileManager.default.removeItem(atPath: gate)
        }
    }

    /// Records a player's time control statuses and stalls as they are announced, on a queue of
    /// its own as ``EventRecorder`` does: read on the cooperative pool, two of these tests waiting
    /// side by side on two cores held both its threads, and neither saw a single event.
    final class StatusRecorder: @unchecked Sendable {
        let statuses = Collector<TimeControlStatus>()
        let stalls = Collector<MediaTime>()
        private var task: Task<Void, Never>?
        private let executor = QueueTaskExecutor()

        init(_ player: Player) {
            let events = player.events
            let statuses = self.statuses, stalls = self.stalls
            task = Task(executorPreference: executor) {
                for await event in events {
                    switch event {
                    case .timeControlStatusChanged(let status): statuses.append(status)
                    case .playbackStalled: stalls.append(player.currentTime())
                    default: break
                    }
                }
            }
        }

        deinit { task?.cancel() }
    }

    @Test("timeControlStatus goes waitingToPlayAtSpecifiedRate (toMinimizeStalls) while an HTTP item stalls, and back to playing")
    func stalledHTTPItem() throws {
        let server = try GatedServer(fixture: "mpeg2.ts", heldFraction: 0.5)
        let item = PlayerItem(url: server.url)
        item.isAudioEnabled = false
        let sink = try NullVideoSink(refreshRate: 25)
        defer { sink.stop() }
        let player = Player(item: item, videoSink: sink)
        defer { player.invalidate() }
        let recorder = StatusRecorder(player)
        let waiting = TimeControlStatus.waitingToPlayAtSpecifiedRate(.toMinimizeStalls)
        player.play()
        // Playing, then out of data: waiting for the stalled stream.
        settle({ recorder.statuses.values.contains(.playing) && recorder.statuses.values.last == waiting }, timeout: 30)
        let beforeRelease = recorder.statuses.values
        try #require(beforeRelease.contains(.playing) && beforeRelease.last == waiting, "\(beforeRelease)")
        #expect(player.timeControlStatus == waiting && player.reasonForWaitingToPlay == .toMinimizeStalls)
        #expect(recorder.stalls.values.count == 1)

        server.release()
        settle({ recorder.statuses.values.count > beforeRelease.count && recorder.statuses.values.last == .playing }, timeout: 30)
        #expect(recorder.statuses.values.dropFirst(beforeRelease.count).first == .playing)
        #expect(player.reasonForWaitingToPlay == nil || player.rate == 0)
        // At the end it pauses (the event may follow the rate by a moment: it is delivered on a task).
        settle({ player.rate == 0 && recorder.statuses.values.last == .paused }, timeout: 30)
        #expect(recorder.statuses.values.last == .paused)
        #expect(item.status == .readyToPlay && player.droppedFrameCount == 0)
    }

    @Test("with automaticallyWaitsToMinimizeStalling off, time runs on through a stall: still playing, late frames dropped")
    func stallWithoutWaiting() throws {
        let server = try GatedServer(fixture: "mpeg2.ts", heldFraction: 0.5)
        let item = PlayerItem(url: server.url)
        item.isAudioEnabled = false
        let sink = try NullVideoSink(refreshRate: 25)
        defer { sink.stop() }
        let player = Player(item: item, videoSink: sink)
        defer { player.invalidate() }
        #expect(player.automaticallyWaitsToMinimizeStalling)
        player.automaticallyWaitsToMinimizeStalling = false
        let recorder = StatusRecorder(player)
        player.play()
        settle({ !recorder.stalls.values.isEmpty }, timeout: 30)
        let stalledAt = try #require(recorder.stalls.values.first)
        #expect(player.timeControlStatus == .playing && player.reasonForWaitingToPlay == nil)
        // Time runs on while no frame comes.
        settle({ player.currentTime() > stalledAt + MediaTime(value: 1, timescale: 2) }, timeout: 10)
        #expect(player.currentTime() > stalledAt + MediaTime(value: 1, timescale: 2))
        server.release()
        settle({ player.rate == 0 && recorder.statuses.values.last == .paused }, timeout: 30)
        let statuses = recorder.statuses.values
        let started = try #require(statuses.firstIndex(of: .playing))
        #expect(statuses[started...].allSatisfy { $0 == .playing || $0 == .paused }, "never waiting once playing: \(statuses)")
        #expect(player.droppedFrameCount > 0, "the frames whose time passed during the stall were dropped")
    }
}
