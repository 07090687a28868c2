import Dispatch
import MediaTime
import Synchronization

/// Identifies a time observer for ``Player/removeTimeObserver(_:)``.
public final class TimeObserverToken: Sendable, Hashable {
    let id: Int
    init(id: Int) { self.id = id }
    public static func == (lhs: TimeObserverToken, rhs: TimeObserverToken) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// A registered periodic or boundary observer and the rules of calling it.
///
/// A call is dispatched to the observer's queue; while one is still running the next one is
/// skipped (not queued), and after removal no new call starts.
final class TimeObserver: Sendable {
    enum Kind: Sendable {
        case periodic(interval: MediaTime)
        case boundary(times: [MediaTime])
    }

    let token: TimeObserverToken
    let kind: Kind
    let queue: DispatchQueue
    let block: @Sendable (MediaTime) -> Void
    private let running = Atomic<Bool>(false)
    private let removed = Atomic<Bool>(false)

    init(token: TimeObserverToken, kind: Kind, queue: DispatchQueue, block: @escaping @Sendable (MediaTime) -> Void) {
        self.token = token
        self.kind = kind
        self.queue = queue
        self.block = block
    }

    func remove() { removed.store(true, ordering: .sequentiallyConsistent) }

    func invoke(_ time: MediaTime) {
        guard !removed.load(ordering: .sequentiallyConsistent) else { return }
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        queue.async { [self] in
            if !removed.load(ordering: .sequentiallyConsistent) { block(time) }
            running.store(false, ordering: .releasing)
        }
    }

    var interval: MediaTime? {
        if case .periodic(let interval) = kind { return interval }
        return nil
    }

    var boundaries: [MediaTime] {
        if case .boundary(let times) = kind { return times }
        return []
    }
}

extension MediaTime {
    /// `floor(self / interval)`, exact for rational times.
    func intervalIndex(_ interval: MediaTime) -> Int64 {
        guard isNumeric, interval.isNumeric, interval.value > 0 else { return 0 }
        let numerator = Int128(value) * Int128(interval.timescale)
        let denominator = Int128(timescale) * Int128(interval.value)
        var quotient = numerator / denominator
        if numerator % denominator != 0 && (numerator < 0) != (denominator < 0) { quotient -= 1 }
        return Int64(clamping: quotient)
    }
}
