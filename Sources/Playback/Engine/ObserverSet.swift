import Dispatch
import MediaTime

/// The player's periodic and boundary time observers, and when each last fired.
///
/// Observers fire on presented time: a boundary when the first presented frame at or past its
/// mark is on screen (or when the item ends past it), a periodic observer when presented time
/// enters a new interval, and every periodic observer at once when time jumps (a seek, a rate
/// change, a new item, the end).
struct ObserverSet {
    private(set) var observers: [TimeObserver] = []
    private var nextID = 0
    /// Each periodic observer's last interval index (`floor(time / interval)`).
    private var periodicIndex: [Int: Int64] = [:]

    /// Registers an observer; a periodic one counts its intervals from `time`.
    mutating func add(
        _ kind: TimeObserver.Kind, queue: DispatchQueue?, at time: MediaTime, block: @escaping @Sendable (MediaTime) -> Void
    ) -> TimeObserverToken {
        nextID += 1
        let token = TimeObserverToken(id: nextID)
        let observer = TimeObserver(token: token, kind: kind, queue: queue ?? DispatchQueue(label: "vitrine.observer.\(token.id)"), block: block)
        observers.append(observer)
        if let interval = observer.interval { periodicIndex[token.id] = time.intervalIndex(interval) }
        return token
    }

    /// Unregisters an observer: no call starts after this.
    mutating func remove(_ token: TimeObserverToken) {
        for observer in observers where observer.token == token { observer.remove() }
        observers.removeAll { $0.token == token }
        periodicIndex[token.id] = nil
    }

    /// Time jumped to `time`: every periodic observer fires there.
    mutating func jumped(to time: MediaTime, into effects: inout EngineEffects) {
        for observer in observers {
            guard let interval = observer.interval else { continue }
            periodicIndex[observer.token.id] = time.intervalIndex(interval)
            effects.actions.append(.invoke(observer, at: time))
        }
    }

    /// A new item starts: every periodic observer fires on its first frame.
    mutating func forgetIntervals() {
        for key in periodicIndex.keys { periodicIndex[key] = .min }
    }

    /// The boundary marks passed going from `last` (exclusive) to `time` (inclusive), with their
    /// observers, in registration order.
    func boundaries(after last: MediaTime, through time: MediaTime) -> [(observer: TimeObserver, mark: MediaTime)] {
        observers.flatMap { observer in observer.boundaries.filter { $0 > last && $0 <= time }.map { (observer, $0) } }
    }

    /// Presented time reached `time` in normal playback: the periodic observers whose interval it
    /// entered fire.
    mutating func advanced(to time: MediaTime, into effects: inout EngineEffects) {
        for observer in observers {
            guard let interval = observer.interval else { continue }
            let index = time.intervalIndex(interval)
            if index > periodicIndex[observer.token.id] ?? .min {
                periodicIndex[observer.token.id] = index
                effects.actions.append(.invoke(observer, at: time))
            }
        }
    }
}
