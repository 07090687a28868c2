import Foundation
import MediaAsset
import Playback
import SinkDoubles
import MediaSinks

/// Runs tasks on a serial dispatch queue of their own: a recorder keeps receiving events while
/// tests block the cooperative pool's few threads (refresh loops, real-time waits).
final class QueueTaskExecutor: TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "tests.event-recorder")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Records a player's events as short names (`"player readyToPlay"`, `"failedToEnd"`, ...) from
/// the moment it is made, for tests that check which events came and in what order.
final class EventRecorder: @unchecked Sendable {
    private let names = Collector<String>()
    private let errors = Collector<MediaError>()
    private var task: Task<Void, Never>?
    private let executor = QueueTaskExecutor()

    init(_ player: Player) {
        let stream = player.events
        let names = self.names
        let errors = self.errors
        task = Task(executorPreference: executor) {
            for await event in stream {
                switch event {
                case .playerStatusChanged(let status): names.append("player \(status.rawValue)")
                case .itemStatusChanged(_, let status): names.append("item \(status.rawValue)")
                case .rateChanged(let rate): names.append("rate \(rate)")
                case .didPlayToEndTime: names.append("didPlayToEnd")
                case .failedToPlayToEndTime(_, let error):
                    names.append("failedToEnd")
                    errors.append(error)
                case .currentItemChanged: names.append("currentItem")
                case .playbackStalled: names.append("stalled")
                case .seekCompleted: names.append("seek")
                case .timeControlStatusChanged: break  // checked by the tests of the status itself
                }
            }
        }
    }

    deinit { task?.cancel() }

    var events: [String] { names.values }
    /// The errors of `failedToPlayToEndTime` events.
    var failures: [MediaError] { errors.values }

    /// Waits (real time, bounded) until `name` was recorded.
    @discardableResult
    func wait(for name: String, timeout: Double = 5) -> Bool {
        settle({ self.events.contains(name) }, timeout: timeout)
        return events.contains(name)
    }
}
