import Foundation
import Supervisor
import Testing

@Suite("The persisted state")
struct StateStoreTests {
    static func folder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-state-\(UUID().uuidString)").path
    }

    @Test("a first start finds a fresh state; what is saved is read back; the file is replaced, never left half-written")
    func roundTrip() throws {
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = StateStore(directory: directory)
        #expect(try store.load() == PersistedState())
        var state = PersistedState()
        state.starts = 3
        state.uncleanEnds = 1
        state.running = true
        state.scheduleChoice = "morning@1764000000"
        try store.save(state)
        #expect(try store.load() == state)
        state.running = false
        try store.save(state)
        #expect(try store.load() == state)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names == ["state.json"], "no temporary file left: \(names)")
    }

    @Test("a garbled file (a power cut before atomic saves) is a fresh state, not a failure")
    func garbled() throws {
        let directory = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "{\"starts\": 4, \"runn".write(toFile: directory + "/state.json", atomically: false, encoding: .utf8)
        #expect(try StateStore(directory: directory).load() == PersistedState())
    }

    @Test("a state directory that cannot be written is an error naming the path and the cause")
    func unwritable() {
        // A regular file where the directory should be: refused even to root.
        let file = Self.folder()
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        defer { try? FileManager.default.removeItem(atPath: file) }
        let store = StateStore(directory: file)
        #expect(throws: StateStoreError.self) { try store.save(PersistedState()) }
        do { try store.save(PersistedState()) } catch {
            #expect(error.description.hasPrefix(file))
        }
    }
}
