import ChildProcesses
import Foundation
import Testing

/// The USB workflow with the real tools: `vitrine bundle create`, `minisign -S`,
/// `vitrine bundle verify`, `vitrine import` into a directory a playing `vitrine play` follows.
@Suite("USB bundles: create, sign, verify, import", .enabled(
    if: CommandRunner.canRun && FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign"),
    "needs minisign (scripts/setup.sh installs it), FFmpeg's tools and the fixtures"))
struct BundleImportTests {
    /// A folder with an operator key pair (`keys/operator.pub`, `operator.key`).
    final class Workspace {
        let root: String
        init() throws {
            root = try CommandRunner.temporaryDirectory("bundles")
            try FileManager.default.createDirectory(atPath: root + "/keys", withIntermediateDirectories: true)
            let made = try CommandRunner.run("minisign", ["-G", "-W", "-p", root + "/keys/operator.pub", "-s", root + "/operator.key"])
            guard made.status == 0 else { throw POSIXError(.EIO) }
        }
        deinit { try? FileManager.default.removeItem(atPath: root) }

        /// A stick `name` whose bundle loops `clip` (copied in as media/clip.mp4), created and signed.
        func stick(_ name: String, clip: String, extraFiles: Int = 0) throws -> String {
            let bundle = root + "/\(name)/vitrine"
            try FileManager.default.createDirectory(atPath: bundle + "/media", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: CommandRunner.fixture(clip), toPath: bundle + "/media/clip.mp4")
            for index in 0..<extraFiles {
                try Data(repeating: UInt8(index % 256), count: 256 << 10).write(to: URL(fileURLWithPath: bundle + "/media/extra\(index).bin"))
            }
            try "version = 1\nfallback = \"loop\"\n[[playlists.loop.items]]\nvideo = \"media/clip.mp4\"\n"
                .write(toFile: bundle + "/schedule.toml", atomically: true, encoding: .utf8)
            let created = try CommandRunner.vitrine(["bundle", "create", bundle])
            guard created.status == 0 else { throw POSIXError(.EIO) }
            let signed = try CommandRunner.run("minisign", ["-S", "-s", root + "/operator.key", "-m", bundle + "/MANIFEST"])
            guard signed.status == 0 else { throw POSIXError(.EIO) }
            return root + "/\(name)"
        }

        func importBundle(_ stick: String) throws -> CommandRunner.Output {
            try CommandRunner.vitrine(["import", stick, "--directory", root + "/data", "--keys", root + "/keys"])
        }

        var currentTarget: String? { try? FileManager.default.destinationOfSymbolicLink(atPath: root + "/data/current") }
    }

    @Test("create, sign, verify: valid; a media file changed after signing is named with the reason")
    func verify() throws {
        let workspace = try Workspace()
        let stick = try workspace.stick("stick", clip: "queue1.mp4")
        let valid = try CommandRunner.vitrine(["bundle", "verify", stick + "/vitrine", "--key", workspace.root + "/keys/operator.pub"])
        #expect(valid.status == 0, "\(valid.stdout)")
        #expect(valid.stdout.contains("valid: 2 files"))
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: stick + "/vitrine/media/clip.mp4"))
        try handle.seek(toOffset: 1000)
        try handle.write(contentsOf: Data([0xff]))
        try handle.close()
        let refused = try CommandRunner.vitrine(["bundle", "verify", stick + "/vitrine", "--key", workspace.root + "/keys/operator.pub"])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("\(stick)/vitrine/media/clip.mp4: its SHA-256 is"), "\(refused.stdout)")
        #expect(refused.stdout.contains("changed after signing"))
    }

    @Test("a playing show follows the import: the new bundle's clip plays after the switch; a refused stick changes nothing")
    func playerFollowsImport() throws {
        let workspace = try Workspace()
        let first = try workspace.stick("first", clip: "queue1.mp4")
        #expect(try workspace.importBundle(first).status == 0)
        let log = workspace.root + "/log.jsonl"
        let player = try ChildProcess(
            executable: CommandRunner.vitrine!,
            arguments: ["play", workspace.root + "/data/current/schedule.toml", "--import-directory", workspace.root + "/data",
                        "--display", "headless", "--mode", "320x240@25", "--no-audio", "--presentation-log", log],
            standardError: workspace.root + "/player.err")
        defer { player.terminate(SIGKILL) }
        let playing = MediaFaultTests.wait(for: log) { $0.contains { $0["type"] as? String == "frame" } }
        try #require(!playing.isEmpty, "the player never presented")

        // A stick with a bad signature: refused, named, nothing switches.
        let bad = try workspace.stick("bad", clip: "queue3.mp4")
        try "untrusted comment: x\nRWQ=\ntrusted comment: x\nAAAA\n".write(toFile: bad + "/vitrine/MANIFEST.minisig", atomically: true, encoding: .utf8)
        let before = workspace.currentTarget
        let refused = try workspace.importBundle(bad)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(bad)/vitrine/MANIFEST.minisig:"), "\(refused.stderr)")
        #expect(workspace.currentTarget == before)

        // A good one: imported, and the player switches to it (queue2 frames from the new bundle).
        let second = try workspace.stick("second", clip: "queue2.mp4")
        let imported = try workspace.importBundle(second)
        #expect(imported.status == 0, "\(imported.stderr)")
        // The switch: a second schedule-loaded, then frames after it (at the next item boundary).
        let switched = MediaFaultTests.wait(for: log, deadline: 120) { records in
            let loads = records.indices.filter { records[$0]["event"] as? String == "schedule-loaded" }
            guard loads.count >= 2, let last = loads.last else { return false }
            return records[last...].filter { $0["type"] as? String == "frame" }.count > 25
        }
        let loads = switched.filter { $0["event"] as? String == "schedule-loaded" }
        #expect(loads.count >= 2, "the player did not load the new schedule: \(switched.filter { $0["type"] as? String == "event" }.suffix(5))")
        // The clip now on screen is the second bundle's (queue2's frames: 2 s at 25 fps, like queue1's, so compare bytes).
        let current = try Data(contentsOf: URL(fileURLWithPath: workspace.root + "/data/current/media/clip.mp4"))
        #expect(current == (try Data(contentsOf: URL(fileURLWithPath: CommandRunner.fixture("queue2.mp4")))))
        #expect(player.isRunning)
    }

    @Test("the importer killed with kill -9 at 100 random moments: current is always one complete bundle; the next import succeeds")
    func killedAtRandomMoments() throws {
        let workspace = try Workspace()
        let old = try workspace.stick("old", clip: "queue1.mp4")
        #expect(try workspace.importBundle(old).status == 0)
        let new = try workspace.stick("new", clip: "queue2.mp4", extraFiles: 24)
        let newClip = try Data(contentsOf: URL(fileURLWithPath: CommandRunner.fixture("queue2.mp4")))
        func currentIsNew() throws -> Bool {
            try Data(contentsOf: URL(fileURLWithPath: workspace.root + "/data/current/media/clip.mp4")) == newClip
        }
        // The moments are spread over how long one whole import takes on this host (a slow or busy
        // machine takes longer: a fixed range would only ever kill before the switch there).
        let timed = Date()
        #expect(try workspace.importBundle(new).status == 0)
        let importMicroseconds = max(50_000, UInt32(Date().timeIntervalSince(timed) * 1_000_000))
        #expect(try workspace.importBundle(old).status == 0)
        var generator = SystemRandomNumberGenerator()
        var switched = 0
        for _ in 0..<100 {
            // Each round imports the bundle that is not current, and is killed at a random moment.
            let wasNew = try currentIsNew()
            let importer = try ChildProcess(
                executable: CommandRunner.vitrine!,
                arguments: ["import", wasNew ? old : new, "--directory", workspace.root + "/data", "--keys", workspace.root + "/keys"])
            usleep(UInt32.random(in: 0...(importMicroseconds * 6 / 5), using: &generator))
            importer.terminate(SIGKILL)
            _ = importer.wait()
            // Whatever the moment, `current` is a whole bundle that verifies against its own manifest.
            let target = try #require(workspace.currentTarget)
            let check = try CommandRunner.vitrine([
                "bundle", "verify", workspace.root + "/data/" + target, "--key", workspace.root + "/keys/operator.pub",
            ])
            #expect(check.status == 0, "after a kill, current (\(target)) is not a complete bundle: \(check.stdout)")
            if try currentIsNew() != wasNew { switched += 1 }
        }
        let last = try workspace.importBundle(new)
        #expect(last.status == 0, "\(last.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: workspace.root + "/data").filter { $0.hasPrefix(".staging") || $0.hasSuffix(".new") }
        #expect(left.isEmpty, "left behind: \(left)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: workspace.root + "/data/bundles")
        #expect(kept.count <= 2, "bundles kept: \(kept)")
        print("kill -9 during import: \(switched) of 100 kills came after the switch, \(100 - switched) before it")
        // The moments spread over the import: some kills land before the switch, some after.
        #expect(switched > 0 && switched < 100)
    }
}
