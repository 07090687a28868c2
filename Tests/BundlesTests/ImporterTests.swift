import Bundles
import Foundation
import Testing
import Threading

@Suite("Importing bundles", .enabled(if: BundleFixture.minisignInstalled, "needs minisign (scripts/setup.sh installs it)"))
struct ImporterTests {
    /// The bundle `current` names, checked file by file against its own manifest.
    static func currentIsComplete(_ fixture: BundleFixture) throws -> Bool {
        // The reader refuses links, as on a stick: open the bundle `current` names.
        let id = try #require(fixture.store.target(of: fixture.store.currentLink))
        let reader = try BundleReader(path: fixture.store.directory + "/bundles/" + id)
        return reader.verify(keys: [try fixture.publicKey], acceptUnsigned: false).problems.isEmpty
    }

    @Test("an import copies, checks and switches current; a second keeps the first as previous; rollback swaps them")
    func importsAndRollsBack() async throws {
        let fixture = try BundleFixture()
        let first = try fixture.stick("first", files: ["media/a.bin": Array("one".utf8)])
        let second = try fixture.stick("second", files: ["media/a.bin": Array("two".utf8), "media/b/c.bin": [1, 2, 3]])
        let importer = try fixture.importer()
        let one = try #require(await importer.importBundle(from: first).importedID)
        #expect(try String(contentsOfFile: fixture.store.currentLink + "/media/a.bin", encoding: .utf8) == "one")
        #expect(fixture.store.currentSchedule == fixture.store.currentLink + "/schedule.toml")
        let two = try #require(await importer.importBundle(from: second).importedID)
        #expect(fixture.store.target(of: fixture.store.currentLink) == two)
        #expect(fixture.store.target(of: fixture.store.previousLink) == one)
        #expect(try Self.currentIsComplete(fixture))
        #expect(try importer.rollback() == one)
        #expect(fixture.store.target(of: fixture.store.currentLink) == one)
        #expect(fixture.store.target(of: fixture.store.previousLink) == two)
        // A third import prunes the bundle neither link names.
        let three = try #require(await importer.importBundle(from: first).importedID)
        let kept = try FileManager.default.contentsOfDirectory(atPath: fixture.root + "/data/bundles").sorted()
        #expect(kept == [one, three].sorted())
        let status = try #require(ImportStatus.read(fixture.store.statusPath))
        #expect(status.state == .imported && status.filesDone == 2 && status.bytesDone == 3 + 12)
    }

    @Test("no vitrine/ folder: ignored, nothing written")
    func ignored() async throws {
        let fixture = try BundleFixture()
        try FileManager.default.createDirectory(atPath: fixture.root + "/empty", withIntermediateDirectories: true)
        guard case .ignored(let reason) = await (try fixture.importer()).importBundle(from: fixture.root + "/empty") else {
            Issue.record("not ignored")
            return
        }
        #expect(reason.contains("no vitrine/ folder"))
        #expect(!FileManager.default.fileExists(atPath: fixture.store.currentLink))
    }

    enum Hostile: String, CaseIterable, Sendable {
        case mediaChangedAfterSigning, symlinkOutside, fifo, deviceNode, extraFile, missingFile, largerThanManifest, hiddenLinkFolder
    }

    @Test("a hostile or damaged stick is refused naming the file and the reason; the current bundle is untouched and nothing is left behind",
          arguments: Hostile.allCases)
    func refusesHostile(_ hostile: Hostile) async throws {
        let fixture = try BundleFixture()
        let importer = try fixture.importer()
        let good = try fixture.stick("good")
        let before = try #require(await importer.importBundle(from: good).importedID)
        let stick = try fixture.stick("bad", files: ["media/a.bin": Array("hello".utf8), "media/big.bin": [UInt8](repeating: 7, count: 1000)])
        let bundle = stick + "/vitrine"
        let expected: (file: String, reason: String)
        switch hostile {
        case .mediaChangedAfterSigning:
            try Data("HELLO".utf8).write(to: URL(fileURLWithPath: bundle + "/media/a.bin"))
            expected = ("media/a.bin", "changed after signing")
        case .symlinkOutside:
            try FileManager.default.removeItem(atPath: bundle + "/media/a.bin")
            try FileManager.default.createSymbolicLink(atPath: bundle + "/media/a.bin", withDestinationPath: "/etc/passwd")
            expected = ("media/a.bin", "a symbolic link: refused")
        case .fifo:
            #expect(mkfifo(bundle + "/media/pipe", 0o644) == 0)
            expected = ("media/pipe", "a FIFO: refused")
        case .deviceNode:
            guard mknod(bundle + "/media/null", S_IFCHR | 0o644, dev_t(1 << 8 | 3)) == 0 else { return }  // needs root
            expected = ("media/null", "a device node: refused")
        case .extraFile:
            try Data("x".utf8).write(to: URL(fileURLWithPath: bundle + "/media/extra.bin"))
            expected = ("media/extra.bin", "not in the manifest")
        case .missingFile:
            try FileManager.default.removeItem(atPath: bundle + "/media/a.bin")
            expected = ("media/a.bin", "listed in the manifest (line 1) but missing")
        case .largerThanManifest:
            // A gigabyte (sparse) where the manifest says 1000 bytes: reading stops at 1001.
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: bundle + "/media/big.bin"))
            try handle.truncate(atOffset: 1 << 30)
            try handle.close()
            expected = ("media/big.bin", "larger than its manifest size of 1000 bytes")
        case .hiddenLinkFolder:
            try FileManager.default.moveItem(atPath: bundle + "/media", toPath: stick + "/elsewhere")
            try FileManager.default.createSymbolicLink(atPath: bundle + "/media", withDestinationPath: stick + "/elsewhere")
            expected = ("media", "a symbolic link: refused")
        }
        let problems = await importer.importBundle(from: stick).problems
        #expect(problems.contains { $0.file == bundle + "/" + expected.file && $0.message.contains(expected.reason) }, "\(problems)")
        #expect(fixture.store.target(of: fixture.store.currentLink) == before)
        #expect(try Self.currentIsComplete(fixture))
        let left = try FileManager.default.contentsOfDirectory(atPath: fixture.root + "/data").filter { $0.hasPrefix(".staging") }
        #expect(left.isEmpty)
        #expect(ImportStatus.read(fixture.store.statusPath)?.state == .refused)
    }

    @Test("a bundle bigger than the free space (less the margin kept free) is refused before anything is copied")
    func freeSpace() async throws {
        let fixture = try BundleFixture()
        let stick = try fixture.stick("stick")
        let problems = await (try fixture.importer(keepFree: 1 << 60)).importBundle(from: stick).problems
        #expect(problems.first?.message.contains("MB kept free, but") == true, "\(problems)")
        #expect(!FileManager.default.fileExists(atPath: fixture.store.currentLink))
    }

    @Test("a schedule that does not validate is refused with the validator's errors, naming the stick's file")
    func invalidSchedule() async throws {
        let fixture = try BundleFixture()
        let stick = try fixture.stick("stick")
        let importer = try fixture.importer { schedule in ["\(schedule):1:1: error: no entry and no fallback"] }
        let problems = await importer.importBundle(from: stick).problems
        #expect(problems.map(\.description) == ["\(stick)/vitrine/schedule.toml: schedule.toml:1:1: error: no entry and no fallback"])
        #expect(!FileManager.default.fileExists(atPath: fixture.store.currentLink))
    }

    @Test("10,000 tiny files import, each checked")
    func manyFiles() async throws {
        let fixture = try BundleFixture()
        var files: [String: [UInt8]] = [:]
        for index in 0..<10_000 { files["media/\(index % 100)/\(index).txt"] = Array("\(index)".utf8) }
        let stick = try fixture.stick("many", files: files)
        let outcome = await (try fixture.importer()).importBundle(from: stick)
        #expect(outcome.importedID != nil, "\(outcome.problems.prefix(3))")
        #expect(try String(contentsOfFile: fixture.store.currentLink + "/media/42/9942.txt", encoding: .utf8) == "9942")
    }

    @Test("two imports at once run one after the other: both complete, one current and the other previous")
    func serialised() async throws {
        let fixture = try BundleFixture()
        let first = try fixture.stick("first", files: ["media/a.bin": [UInt8](repeating: 1, count: 4 << 20)])
        let second = try fixture.stick("second", files: ["media/a.bin": [UInt8](repeating: 2, count: 4 << 20)])
        let importer = try fixture.importer()
        async let a = importer.importBundle(from: first)
        async let b = importer.importBundle(from: second)
        let ids = [await a, await b].compactMap(\.importedID)
        #expect(ids.count == 2)
        #expect(Set([fixture.store.target(of: fixture.store.currentLink), fixture.store.target(of: fixture.store.previousLink)]) == Set(ids))
        #expect(try Self.currentIsComplete(fixture))
    }

    @Test("the stick pulled mid-copy (its file cut short under the reader): refused, nothing left, the current bundle untouched")
    func pulledMidCopy() async throws {
        let fixture = try BundleFixture()
        let importer = try fixture.importer()
        let before = try #require(await importer.importBundle(from: try fixture.stick("good")).importedID)
        // A 256 MB file (sparse on the stick); the manifest records it whole.
        let stick = try fixture.stick("pulled", files: ["media/a.bin": Array("hello".utf8)], signed: false)
        let big = stick + "/vitrine/media/big.bin"
        try Data().write(to: URL(fileURLWithPath: big))
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: big))
        try handle.truncate(atOffset: 256 << 20)
        try handle.close()
        _ = try BundleWriter.createManifest(in: stick + "/vitrine")
        try fixture.sign(stick + "/vitrine")

        // As soon as the copy of big.bin has begun, the source shrinks to 4 MB: reads end early.
        // A thread of its own: the import blocks a thread of the shared pool while it copies.
        let data = fixture.root + "/data"
        let cut = LockedValue(false)
        let cutter = Thread {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let staging = (try? FileManager.default.contentsOfDirectory(atPath: data))?.first { $0.hasPrefix(".staging-") }
                if let staging, let size = try? FileManager.default.attributesOfItem(atPath: "\(data)/\(staging)/media/big.bin")[.size] as? Int,
                   size > 0 {
                    truncate(big, 4 << 20)
                    cut.withLock { $0 = true }
                    return
                }
                usleep(200)
            }
        }
        cutter.start()
        let outcome = await importer.importBundle(from: stick)
        try #require(cut.withLock { $0 }, "the copy ended before the file could be cut: \(outcome)")
        let problems = outcome.problems
        #expect(problems.contains { $0.file == big && $0.message.contains("the manifest says \(256 << 20)") }, "\(problems)")
        #expect(fixture.store.target(of: fixture.store.currentLink) == before)
        let left = try FileManager.default.contentsOfDirectory(atPath: data).filter { $0.hasPrefix(".staging") }
        #expect(left.isEmpty)
    }
}

