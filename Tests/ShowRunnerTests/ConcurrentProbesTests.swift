@testable import ShowRunner
import Testing
import Threading

/// How many jobs run at once and how many ran in all. Behind `LockedValue`, not
/// `Synchronization.Mutex`, whose futex ThreadSanitizer cannot see.
private final class Occupancy: Sendable {
    private let state = LockedValue((running: 0, peak: 0, started: [Int]()))

    func enter(_ item: Int) {
        state.withLock {
            $0.running += 1
            $0.peak = max($0.peak, $0.running)
            $0.started.append(item)
        }
    }

    func leave() { state.withLock { $0.running -= 1 } }
    var peak: Int { state.withLock { $0.peak } }
    var started: [Int] { state.withLock { $0.started } }
}

@Suite("ConcurrentProbes")
struct ConcurrentProbesTests {
    @Test("every distinct key is answered once, by its own job")
    func answersEachKeyOnce() async {
        let occupancy = Occupancy()
        let items = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]
        let answers = await ConcurrentProbes.run(items, key: { "k\($0)" }, width: 3) { item in
            occupancy.enter(item)
            defer { occupancy.leave() }
            return item * 10
        }
        #expect(answers == ["k1": 10, "k2": 20, "k3": 30, "k4": 40, "k5": 50, "k6": 60, "k9": 90])
        #expect(occupancy.started.sorted() == [1, 2, 3, 4, 5, 6, 9])
    }

    @Test("no more than `width` jobs run at once, and they do overlap", arguments: [1, 2, 4])
    func boundedWidth(width: Int) async {
        let occupancy = Occupancy()
        // One deadline for all the jobs: if they never overlap, the test fails after it, not 24 times it.
        let deadline = ContinuousClock.now + .seconds(20)
        let answers = await ConcurrentProbes.run(Array(0..<24), key: { $0 }, width: width) { item in
            occupancy.enter(item)
            // Each job waits (as on storage) until `width` have been running at once: they must
            // overlap, or the deadline passes and the peak falls short.
            while occupancy.peak < width, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
            occupancy.leave()
            return item
        }
        #expect(answers.count == 24)
        #expect(occupancy.peak <= width)
        #expect(occupancy.peak == width, "the jobs should run side by side")
    }

    @Test("nothing to do answers nothing")
    func empty() async {
        let answers = await ConcurrentProbes.run([Int](), key: { $0 }) { $0 }
        #expect(answers.isEmpty)
    }
}
