import ChildProcesses
import Foundation
import MediaAsset
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

/// "Failed to play to end" versus "ended early at a clean end of file": reading that stops on an
/// error (the connection dropped before the announced length, an I/O error, a read timeout), or a
/// decoder that rejects every packet from some point to the end, is a failure; an end of file
/// FFmpeg reports — even early, in a cut file or one whose tail holds no packets — is an end.
@Suite("Failing to play to the end")
struct FailedToPlayToEndTests {
    /// An HTTP server that announces each file's full length, sends only the first `fraction`
    /// of it and closes the connection: a network stream that drops part-way.
    final class DroppingServer {
        static let script = """
            import http.server, os, socketserver, sys
            root, port, fraction = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
            class Handler(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def do_GET(self):
                    data = open(os.path.join(root, self.path.lstrip("/")), "rb").read()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: int(len(data) * fraction)])
                    self.wfile.flush()
                    self.close_connection = True
                def log_message(self, *args): pass
            socketserver.TCPServer.allow_reuse_address = True
            with socketserver.TCPServer(("127.0.0.1", port), Handler) as server: server.serve_forever()
            """
        let process: ChildProcess
        let port = Int.random(in: 40_000..<50_000)

        init(fraction: Double) throws {
            process = try ChildProcess(executable: "python3", arguments: [
                "-c", Self.script, Fixtures.root.appendingPathComponent("Fixtures/generated").path, String(port), String(fraction)])
            try Fixtures.waitUntilServing(url("mpeg2.ts"), process: process)
        }

        func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

        deinit { process.terminate(SIGKILL) }
    }

    /// Plays `item` on a 25 Hz harness until the player stops; returns the recorder and the log.
    private func play(_ item: PlayerItem, harness: Harness) -> (EventRecorder, [PresentationRecord]) {
        let player = harness.player(nil)
        defer { player.invalidate() }
        let recorder = EventRecorder(player)
        let log = Collector<PresentationRecord>()
        player.setPresentationHandler { log.append($0) }
        player.replaceCurrentItem(with: item)
        player.play()
        harness.video.run(until: { player.rate == 0 }, maxRefreshes: 1_000)
        recorder.wait(for: "rate 0.0")
        settle({ recorder.events.contains("didPlayToEnd") || recorder.events.contains("failedToEnd") })
        return (recorder, log.values)
    }

    private func endReason(_ records: [PresentationRecord]) -> String?? {
        for record in records {
            if case .event(let event) = record, event.kind == .itemEnded { return .some(event.reason) }
        }
        return .none
    }

    @Test("a stream that drops part-way plays what arrived, then fails to play to its end")
    func droppedStream() throws {
        _ = Fixtures.path("mpeg2.ts")
        let server = try DroppingServer(fraction: 0.5)
        let harness = Harness(refreshRate: 25)
        let url = server.url("mpeg2.ts")
        let item = PlayerItem(url: url)
        item.isAudioEnabled = false
        let (recorder, log) = play(item, harness: harness)
        let shown = harness.shownTimes
        // Half the bytes: some of the 75 frames, in order, none after the drop.
        #expect(shown.count > 10 && shown.count < 75, "\(shown.count) frames")
        #expect(shown == shown.sorted())
        #expect(recorder.events.contains("failedToEnd"))
        #expect(!recorder.events.contains("didPlayToEnd"))
        let error = try #require(recorder.failures.first)
        #expect(error.description.contains(url), "\(error)")
        // The item played: it is not a failed item, and the log's item_ended says why it stopped.
        #expect(item.status == .readyToPlay)
        let reason = try #require(endReason(log) ?? nil)
        #expect(reason == error.description)
    }

    @Test("the same stream sent whole plays to its end")
    func wholeStream() throws {
        _ = Fixtures.path("mpeg2.ts")
        let server = try DroppingServer(fraction: 1)
        let harness = Harness(refreshRate: 25)
        let item = PlayerItem(url: server.url("mpeg2.ts"))
        item.isAudioEnabled = false
        let (recorder, log) = play(item, harness: harness)
        #expect(harness.shownTimes.count == 75)
        #expect(recorder.events.contains("didPlayToEnd"))
        #expect(!recorder.events.contains("failedToEnd"))
        #expect(endReason(log) == .some(nil))
    }

    @Test("a local file whose second half is garbage ends early at a clean end of file")
    func garbageTail() throws {
        let original = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("mpeg2.ts")))
        let half = original.count / 2
        var damaged = original.prefix(half)
        damaged.append(contentsOf: (0..<(original.count - half)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-garbage-tail-\(UUID().uuidString).ts")
        try damaged.write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }

        let harness = Harness(refreshRate: 25)
        let item = PlayerItem(url: path.path)
        item.isAudioEnabled = false
        let (recorder, _) = play(item, harness: harness)
        let shown = harness.shownTimes
        // FFmpeg finds no more packets in the garbage and reports the end of the file: what
        // decoded plays, and the item ends normally (FFmpeg cannot tell it from a short file).
        #expect(shown.count > 10 && shown.count < 75, "\(shown.count) frames")
        #expect(recorder.events.contains("didPlayToEnd"))
        #expect(!recorder.events.contains("failedToEnd"))
    }

    /// A copy of the H.264/AAC fixture with its index first (so the demuxer keeps handing out
    /// packets whatever their bytes), with `damage` applied to the bytes of its media data.
    private func damagedMP4(named name: String, in directory: URL, damage: (inout Data, Range<Int>) -> Void) throws -> URL {
        let faststart = directory.appendingPathComponent("faststart.mp4").path
        _ = Fixtures.run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", Fixtures.path("h264_aac.mp4"), "-c", "copy", "-movflags", "+faststart", faststart])
        var data = try Data(contentsOf: URL(fileURLWithPath: faststart))
        let mediaData = try #require(data.range(of: Data("mdat".utf8))).upperBound
        damage(&data, mediaData..<data.count)
        let damaged = directory.appendingPathComponent(name)
        try data.write(to: damaged)
        return damaged
    }

    private func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-damaged-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("an MP4 whose media data turns to garbage half-way: the decoder rejects the rest, the item fails to play to its end")
    func undecodableTail() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let damaged = try damagedMP4(named: "damaged.mp4", in: directory) { data, media in
            let half = media.lowerBound + media.count / 2
            data.replaceSubrange(half..<media.upperBound, with: (0..<(media.upperBound - half)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
        }

        let harness = Harness(refreshRate: 25)
        let item = PlayerItem(url: damaged.path)
        item.isAudioEnabled = false
        let (recorder, log) = play(item, harness: harness)
        let shown = harness.shownTimes
        #expect(shown.count > 25 && shown.count < 250, "\(shown.count) frames")
        #expect(shown == shown.sorted())
        #expect(recorder.events.contains("failedToEnd"))
        #expect(!recorder.events.contains("didPlayToEnd"))
        let error = try #require(recorder.failures.first)
        #expect(error.description.contains("damaged.mp4"), "\(error)")
        #expect(error.description.contains("h264"), "\(error)")
        #expect((endReason(log) ?? nil) == error.description)
    }

    @Test("an MP4 with a few damaged packets is concealed and plays to its end")
    func concealedDamage() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let damaged = try damagedMP4(named: "flipped.mp4", in: directory) { data, media in
            // Ten bytes flipped, spread over the first half of the media data.
            for index in 1...10 { data[media.lowerBound + media.count * index / 22] ^= 0xFF }
        }
        let harness = Harness(refreshRate: 25)
        let item = PlayerItem(url: damaged.path)
        item.isAudioEnabled = false
        let (recorder, _) = play(item, harness: harness)
        #expect(item.status == .readyToPlay)
        #expect(harness.shownTimes.count > 200, "\(harness.shownTimes.count) frames")
        #expect(recorder.events.contains("didPlayToEnd"))
        #expect(!recorder.events.contains("failedToEnd"))
    }
}
