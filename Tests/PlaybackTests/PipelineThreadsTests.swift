import Foundation
import MediaSinks
import Testing
@testable import Playback

/// An item's threads exist as soon as its pipeline starts, before its input opens: a thread
/// created while another thread is inside `dlopen` (the display's renderer loading Mesa and LLVM
/// at a player's start) waits for the load to end, so the decode threads are not created later.
@Suite("Pipeline threads")
struct PipelineThreadsTests {
    /// The IDs of this process's threads that carry the kernel name `name` (other players' threads
    /// of the same name may come and go meanwhile: the test follows its own by ID).
    static func threads(named name: String) -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.filter { task in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        })
    }

    /// Waits up to 30 s for `condition`.
    static func wait(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while !condition() {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return true
    }

    /// A TCP port on 127.0.0.1 that takes connections into its backlog and never answers:
    /// an HTTP input opening from it waits until the pipeline stops.
    final class SilentServer {
        let socket: Int32
        let port: Int

        init() throws {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                    bind(socket, generic, length) == 0 && listen(socket, 8) == 0 && getsockname(socket, generic, &length) == 0
                }
            }
            guard socket >= 0, bound else {
                close(socket)
                throw POSIXError(.EADDRNOTAVAIL)
            }
            self.socket = socket
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(socket) }
    }

    @Test("the video and audio decode threads run while the demux thread is still opening the input (a server that never answers), and end with the pipeline")
    func decodeThreadsBeforeTheInputOpens() throws {
        let server = try SilentServer()
        let videoBefore = Self.threads(named: "vitrine-video"), audioBefore = Self.threads(named: "vitrine-audio")
        let pipeline = ItemPipeline(source: "http://127.0.0.1:\(server.port)/stream.ts", audioFormat: AudioFormat(), audioEnabled: true) { _ in }
        pipeline.start()

        var ours: Set<String> = []
        #expect(Self.wait {
            let video = Self.threads(named: "vitrine-video").subtracting(videoBefore)
            let audio = Self.threads(named: "vitrine-audio").subtracting(audioBefore)
            ours = video.union(audio)
            return !video.isEmpty && !audio.isEmpty
        }, "the decode threads did not start before the input opened")
        #expect(pipeline.lock.withLock { $0.input == nil }, "the input opened, from a server that never answers")

        // Stopping interrupts the open and lets the decode threads, still waiting for their
        // decoders, go: every thread is joined.
        pipeline.stop()
        let left = ours.intersection(Self.threads(named: "vitrine-video").union(Self.threads(named: "vitrine-audio")))
        #expect(left.isEmpty, "decode threads are left after the pipeline stopped: \(left.sorted())")
        withExtendedLifetime(server) {}
    }
}
