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
}
