/// A `TaskExecutor` backed by one ``NamedThread``: the async work of a subsystem that must never
/// compete with the real-time threads (the inspector's request handlers, their JSON and PNG
/// encoding) runs there, at a lower priority, instead of on the shared cooperative pool.
///
/// ```swift
/// let executor = try ThreadExecutor(name: "vitrine-inspect", idle: true)
/// try await withTaskExecutorPreference(executor) { try await server.run() }
/// ```
///
/// Child tasks inherit the preference; jobs run one at a time, in the order they were enqueued.
/// The thread lives as long as the process (the subsystems using it do).
public final class ThreadExecutor: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
    }

    /// The thread's name.
    public let name: String
    /// Guards the jobs enqueued and not yet taken by the thread; the thread sleeps on it.
    private let queue = ConditionLock<Queue, StateChanged>(Queue())

    /// Starts the thread `name`; `idle`: in `SCHED_IDLE` (``ThreadPriority/makeCurrentIdle()``),
    /// running only on CPU time the other threads leave.
    public init(name: String, idle: Bool = false) throws(ThreadStartError) {
        self.name = name
        // The thread holds the executor: both live until the process ends.
        _ = try NamedThread.start(name: name) { [self] in
            if idle { ThreadPriority.makeCurrentIdle() }
            let executor = asUnownedTaskExecutor()
            while true {
                let jobs = queue.withLock(waitingUntil: { !$0.jobs.isEmpty }) { state in
                    defer { state.jobs.removeAll(keepingCapacity: true) }
                    return state.jobs
                }
                for job in jobs { job.runSynchronously(on: executor) }
            }
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.jobs.append(job) }
        queue.broadcast()
    }
}
