import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension KMSDisplay {
    private static let signalSources = Mutex<[any DispatchSourceSignal]>([])

    /// On SIGTERM or SIGINT, stops every KMS display (restoring the CRTC state found at start and
    /// dropping DRM master), runs `beforeExit`, then exits with 128 + the signal number.
    ///
    /// Call once at start-up from the command line; a program with its own signal handling can call
    /// ``stopAll()`` from it instead.
    public static func restoreOnTerminationSignals(beforeExit: @escaping @Sendable (Int32) -> Void = { _ in }) {
        signalSources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGTERM, SIGINT] {
                signal(number, SIG_IGN)  // delivered to the dispatch source instead
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    stopAll()
                    beforeExit(number)
                    exit(128 + number)
                }
                source.resume()
                sources.append(source)
            }
        }
    }
}
