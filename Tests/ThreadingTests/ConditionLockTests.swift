import Synchronization
import Testing
import Threading
#if canImport(Glibc)
import Glibc
#endif

@Suite("ConditionLock: state behind a mutex, waiters per condition")
struct ConditionLockTests {
    enum Waiter: Int, LockCondition { case producer, consumer }

    struct Queue {
        var items: [Int] = []
        var closed = false
    }

    @Test("a bounded queue hands 100,000 items from producer to consumer in order, without a lost wake-up")
    func producerConsumer() throws {
        let lock = ConditionLock<Queue, Waiter>(Queue())
        let count = 100_000
        let producer = try NamedThread.start(name: "test-producer") {
            for value in 0..<count {
                lock.withLock(waitingFor: .producer, until: { $0.items.count < 4 }) { $0.items.append(value) }
                lock.broadcast(.consumer)
            }
            lock.withLock { $0.closed = true }
            lock.broadcast(.consumer)
        }
        var received: [Int] = []
        received.reserveCapacity(count)
        while true {
            let (batch, closed) = lock.withLock(waitingFor: .consumer, until: { !$0.items.isEmpty || $0.closed }) { state in
                defer { state.items.removeAll() }
                return (state.items, state.closed)
            }
            lock.broadcast(.producer)
            received += batch
            if closed && batch.isEmpty { break }
        }
        producer.join()
        #expect(received == Array(0..<count))
    }

    @Test("a wait with a timeout returns after about that long when nothing changes, with the predicate still false")
    func timeout() {
        let lock = ConditionLock<Int, StateChanged>(0)
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        let seen = lock.withLock(waitingUntil: { $0 > 0 }, timeout: .milliseconds(50)) { $0 }
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        let elapsed = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
        #expect(seen == 0)
        #expect(elapsed >= 0.045)
    }

    @Test("a broadcast of one condition does not wake the waiters of another")
    func separateConditions() throws {
        let lock = ConditionLock<(producerWakes: Int, go: Bool), Waiter>((0, false))
        let waiting = Atomic<Bool>(false)
        let thread = try NamedThread.start(name: "test-waiter") {
            lock.withLock(waitingFor: .producer, until: { state in
                waiting.store(true, ordering: .releasing)
                state.producerWakes += 1
                return state.go
            }) { _ in }
        }
        while !waiting.load(ordering: .acquiring) { usleep(1000) }
        for _ in 0..<20 {
            lock.broadcast(.consumer)
            usleep(1000)
        }
        // Only the first check ran: the consumer broadcasts woke nobody.
        #expect(lock.withLock { $0.producerWakes } == 1)
        lock.withLock { $0.go = true }
        lock.broadcast(.producer)
        thread.join()
        #expect(lock.withLock { $0.producerWakes } == 2)
    }
}

@Suite("NamedThread and ThreadBound")
struct ThreadTests {
    @Test("a started thread carries its name (cut to the kernel's 15 bytes) and runs its body once")
    func namedThread() throws {
        let name = LockedValue<String>("")
        let runs = Atomic<Int>(0)
        let thread = try NamedThread.start(name: "vitrine-a-very-long-thread-name") {
            let read = NamedThread.currentName ?? ""
            name.withLock { $0 = read }
            runs.add(1, ordering: .relaxed)
        }
        thread.join()
        thread.join()
        #expect(name.withLock { $0 } == "vitrine-a-very-")
        #expect(runs.load(ordering: .relaxed) == 1)
        #expect(!thread.isCurrent)
    }

    @Test("a start failure names the thread and the cause")
    func startErrorDescription() {
        let error = ThreadStartError(name: "vitrine-demux", code: EAGAIN)
        #expect(error.description.hasPrefix("cannot start thread vitrine-demux: "))
        #expect(error.description.hasSuffix("(error \(EAGAIN))"))
    }

    @Test("the thread that claims a value owns it; others do not")
    func ownership() throws {
        let bound = ThreadBound(42, resource: "the test value")
        #expect(!bound.isOwnedByCurrentThread)
        let seenOnOwner = LockedValue<(owned: Bool, value: Int)>((false, 0))
        let owner = try NamedThread.start(name: "test-owner") {
            bound.claim()
            bound.value += 1
            seenOnOwner.withLock { $0 = (bound.isOwnedByCurrentThread, bound.withValue { $0 }) }
        }
        owner.join()
        #expect(seenOnOwner.withLock { $0.owned })
        #expect(seenOnOwner.withLock { $0.value } == 43)
        #expect(!bound.isOwnedByCurrentThread)
    }

    #if DEBUG
    @Test("in debug builds, touching a bound value from another thread stops the process")
    func ownershipIsChecked() async {
        await #expect(processExitsWith: .failure) {
            let bound = ThreadBound(0, resource: "the PCM")
            let owner = try NamedThread.start(name: "test-owner") { bound.claim() }
            owner.join()
            bound.value = 1
        }
    }
    #endif
}
