import ChildProcesses
import Foundation
import Testing

/// Probing and thumbnails over HTTP, including an HLS playlist, from a local web server.
@Suite("network sources", .enabled(if: CommandRunner.canRun && CommandRunner.hasTool("python3"), "needs python3 for a local web server"))
struct NetworkSourceTests {
    /// `python3 -m http.server` on a free port, serving `directory`.
    final class WebServer {
        let process: ChildProcess
        let port: UInt16

        init(serving directory: String) throws {
            port = try FreePort.find()
            process = try ChildProcess(
                executable: "python3", arguments: ["-m", "http.server", "--bind", "127.0.0.1", "--directory", directory, String(port)])
            FreePort.waitUntilListening(port)
        }

        deinit { process.terminate(SIGKILL) }
    }

    @Test("an MP4 over HTTP and an HLS playlist probe like the file")
    func probeOverHTTP() throws {
        let directory = try CommandRunner.temporaryDirectory("web")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = CommandRunner.fixture("h264_aac.mp4")
        try FileManager.default.copyItem(atPath: source, toPath: directory + "/clip.mp4")
        let hls = try CommandRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-i", source, "-c", "copy", "-f", "hls", "-hls_time", "2",
            "-hls_playlist_type", "vod", directory + "/index.m3u8",
        ])
        try #require(hls.status == 0, "\(hls.stderr)")
        let server = try WebServer(serving: directory)

        let mp4 = try CommandRunner.vitrine(["probe", "--json", "http://127.0.0.1:\(server.port)/clip.mp4"])
        #expect(mp4.status == 0, "\(mp4.stderr)")
        let mp4Report = try #require(try JSONSerialization.jsonObject(with: mp4.stdoutData) as? [String: Any])
        #expect((mp4Report["format"] as? [String: Any])?["duration"] as? Double == 10)

        let playlist = try CommandRunner.vitrine(["probe", "--json", "http://127.0.0.1:\(server.port)/index.m3u8"])
        #expect(playlist.status == 0, "\(playlist.stderr)")
        let hlsReport = try #require(try JSONSerialization.jsonObject(with: playlist.stdoutData) as? [String: Any])
        #expect((hlsReport["format"] as? [String: Any])?["name"] as? String == "hls")
        let tracks = hlsReport["tracks"] as? [[String: Any]] ?? []
        #expect(tracks.map { $0["codec"] as? String } == ["h264", "aac"])

        let missing = try CommandRunner.vitrine(["probe", "http://127.0.0.1:\(server.port)/missing.mp4"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("404"), "\(missing.stderr)")
    }
}
