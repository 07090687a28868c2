import ChildProcesses
import Foundation
import Testing

/// A screen run from its configuration with `[import] setup_hint = true` and no bundle imported says,
/// at the top of the screen and in its log, how to configure it: a USB stick, and the inspector's URL
/// at the machine's addresses when the inspector listens beyond loopback. Without the key: nothing.
@Suite("Setup hint on an unconfigured screen", .enabled(if: CommandRunner.canRun && CommandRunner.hasTool("curl") && CommandRunner.hasTool("openssl"),
                                                        "needs curl, openssl, FFmpeg's tools and the fixtures"))
struct SetupHintTests {
    /// The log lines of the hint (logger `vitrine.setup`), polled until one comes or 60 s pass.
    static func hintLines(_ player: InspectorTests.Player) throws -> [String] {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let lines = (try player.json("/api/logs?limit=1000")["lines"] as? [[String: Any]]) ?? []
            let hints = lines.filter { $0["label"] as? String == "vitrine.setup" }.compactMap { $0["message"] as? String }
            if !hints.isEmpty { return hints }
            usleep(200_000)
        }
        return []
    }

    @Test("inspector on loopback: the hint names the USB stick only")
    func loopback() throws {
        let player = try InspectorTests.Player(setupHint: true)
        let hints = try Self.hintLines(player)
        #expect(hints.first?.contains("plug in a USB stick with a signed Vitrine bundle") == true, "\(hints)")
        #expect(hints.first?.contains("://") == false, "\(hints)")
    }

    @Test("without setup_hint no hint, however long the screen goes without a bundle")
    func off() throws {
        let player = try InspectorTests.Player()
        // The hint service is started before playback and speaks at once: once a frame is on the
        // screen it would have. Wait for that event (generous deadline), not for a fixed time.
        let deadline = Date().addingTimeInterval(60)
        // null (not yet a frame) and absent alike mean no position.
        let hasPosition = { (status: [String: Any]) in status["positionSeconds"].map { !($0 is NSNull) } ?? false }
        while !hasPosition(try player.json("/api/status")), Date() < deadline { usleep(200_000) }
        #expect(hasPosition(try player.json("/api/status")), "no frame within 60 s")
        let lines = (try player.json("/api/logs?limit=1000")["lines"] as? [[String: Any]]) ?? []
        #expect(!lines.contains { $0["label"] as? String == "vitrine.setup" })
    }

    @Test("inspector on every address over HTTPS: the hint gives its URL at the machine's address (or waits for one)")
    func everyAddress() throws {
        let player = try InspectorTests.Player(tls: true, listenHost: "0.0.0.0", setupHint: true)
        let hints = try Self.hintLines(player)
        let hint = try #require(hints.first)
        #expect(hint.contains("plug in a USB stick"))
        let hasURL = hint.range(of: #"https://[0-9.]+:\#(player.port)/"#, options: .regularExpression) != nil
        #expect(hasURL || hint.contains("on port \(player.port) once the network is up"), "\(hint)")
        #expect(!hint.contains("127.0.0.1"), "loopback is no address to give an operator: \(hint)")
    }
}
