import Synchronization
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// The write end of the self-pipe the signal handler writes the signal number to (async-signal-safe).
nonisolated(unsafe) private var terminationPipeWriteEnd: Int32 = -1
private let terminationState = Mutex<(installed: Bool, beforeExit: (@Sendable (Int32) -> Void)?)>((false, nil))

extension KMSDisplay {
    /// On SIGTERM or SIGINT, stops every KMS display (restoring the CRTC state found at start and
    /// dropping DRM master), runs `beforeExit`, then exits with 128 + the signal number.
    ///
    /// The handler only writes the signal number to a pipe; a watcher thread does the work, so nothing
    /// unsafe runs in signal context. Call once at start-up; a program with its own signal handling can
    /// call ``stopAll()`` from it instead.
    public static func restoreOnTerminationSignals(beforeExit: (@Sendable (Int32) -> Void)? = nil) {
        let readEnd = terminationState.withLock { state -> Int32? in
            state.beforeExit = beforeExit
            guard !state.installed else { return nil }
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return nil }
            state.installed = true
            terminationPipeWriteEnd = ends[1]
            return ends[0]
        }
        guard let readEnd else { return }
        let started = try? NamedThread.start(name: "vitrine-signals") {
            var number: UInt8 = 0
            while read(readEnd, &number, 1) != 1 {}
            KMSDisplay.stopAll()
            terminationState.withLock { $0.beforeExit }?(Int32(number))
            exit(128 + Int32(number))
        }
        guard started != nil else { return }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(terminationPipeWriteEnd, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = Int32(SA_RESTART)
        sigaction(SIGTERM, &action, nil)
        sigaction(SIGINT, &action, nil)
    }
}
