import Synchronization
import Testing
import Threading

@Suite("ThreadPriority: one thread's nice value")
struct ThreadPriorityTests {
    @Test("lowering a thread's priority moves it and the threads it starts afterwards, not the thread that started it, and stops at 19")
    func lowerCurrent() throws {
        let callerBefore = try #require(ThreadPriority.currentNice)
        let seen = Mutex<(lowered: Int32?, child: Int32?, capped: Int32?)>((nil, nil, nil))
        let outer = try NamedThread.start(name: "test-lowered") {
            let lowered = ThreadPriority.lowerCurrent(by: 3)
            let child = try? NamedThread.start(name: "test-inherits") {
                let inherited = ThreadPriority.currentNice
                // The most it can go: 19, however many steps are asked for.
                let capped = ThreadPriority.lowerCurrent(by: 40)
                seen.withLock { $0.child = inherited; $0.capped = capped }
            }
            child?.join()
            seen.withLock { $0.lowered = lowered }
        }
        outer.join()
        let result = seen.withLock { $0 }
        #expect(result.lowered == min(callerBefore + 3, 19))
        #expect(result.child == result.lowered, "a thread started after the change inherits it")
        #expect(result.capped == 19)
        #expect(ThreadPriority.currentNice == callerBefore, "the caller's thread is untouched")
    }
}
