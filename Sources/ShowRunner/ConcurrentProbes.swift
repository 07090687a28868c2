#if canImport(Glibc)
import Glibc
#endif

/// Runs one asynchronous job per key, a bounded number at once, and collects the answers by key.
///
/// Probing a schedule's media opens each file with FFmpeg (its container read, its streams
/// analysed): a bundle of a hundred clips took 1.7 ms each on a 2-core machine, one after the
/// other, before the first frame. Those openings are independent, so they run side by side, as
/// many at a time as the machine has processors (at least two: part of each is waiting for the
/// storage).
///
/// The jobs are Swift tasks of one task group (no thread or lock of its own); a job that blocks
/// blocks a thread of the cooperative pool: `Asset`'s loads run on Dispatch's global queue and are
/// awaited, and only the schedule commands' picture decodes (``ScheduleLoader/Probing/everything``,
/// never the player's loads) run in the task itself.
public enum ConcurrentProbes {
    /// How many jobs run at once by default: the online processors, at least two.
    public static var defaultWidth: Int {
        #if canImport(Glibc)
        return max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        return 2
        #endif
    }

    /// The answer of `job` for each item, by the item's key (items with a key already seen are
    /// skipped), at most `width` jobs running at once.
    public static func run<Item: Sendable, Key: Hashable & Sendable, Answer: Sendable>(
        _ items: [Item], key: (Item) -> Key, width: Int = defaultWidth, _ job: @escaping @Sendable (Item) async -> Answer
    ) async -> [Key: Answer] {
        var seen = Set<Key>()
        let unique = items.map { (key($0), $0) }.filter { seen.insert($0.0).inserted }
        var answers: [Key: Answer] = [:]
        answers.reserveCapacity(unique.count)
        await withTaskGroup(of: (Key, Answer).self) { group in
            var pending = unique.makeIterator()
            for _ in 0..<max(1, width) {
                guard let (key, item) = pending.next() else { break }
                group.addTask { (key, await job(item)) }
            }
            while let (key, answer) = await group.next() {
                answers[key] = answer
                if let (key, item) = pending.next() { group.addTask { (key, await job(item)) } }
            }
        }
        return answers
    }
}
