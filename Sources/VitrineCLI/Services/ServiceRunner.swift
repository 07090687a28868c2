import Logging
import ServiceLifecycle
import Threading
import UnixSignals

/// Runs a command's services as one group, and stops them in order on SIGTERM or SIGINT, when
/// the first one ends by itself, or when one fails.
///
/// `services` are given in start order: the device services first, the one that drives them
/// (playback) last. Stopping goes the other way, one service after the other: playback stops,
/// then the display (the screen restored), then the sound (the PCM drained and closed), then the
/// presentation log (flushed). The whole shutdown is bounded: past ``gracefulLimit`` the services
/// still running are cancelled, a warning names them, and the command exits with an error
/// (ServiceGroup itself says so only at debug level, and returns as if the stop had been orderly).
enum ServiceRunner {
    /// How long an orderly shutdown may take before the services are cancelled.
    static let gracefulLimit: Duration = .seconds(10)

    /// Runs the group; returns when every service has stopped. Throws when a service failed or
    /// the shutdown ran past its bound.
    static func run(_ services: [any Service], logger: Logger) async throws {
        // The names of the services whose task the group cancelled: appended by each one's
        // CancellationWatch as its task ends, read here once the group has returned.
        let cancelled = LockedValue<[String]>([])
        let watched = services.map { CancellationWatch(service: $0, cancelled: cancelled) }
        var configurations = watched.dropLast().map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
        if let driver = watched.last {
            configurations.append(.init(service: driver, successTerminationBehavior: .gracefullyShutdownGroup))
        }
        var configuration = ServiceGroupConfiguration(services: configurations, logger: logger)
        configuration.gracefulShutdownSignals = [.sigterm, .sigint]
        configuration.maximumGracefulShutdownDuration = gracefulLimit
        configuration.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: configuration).run()
        let overran = cancelled.withLock { $0 }
        guard overran.isEmpty else {
            let error = ShutdownOverrun(services: overran, limit: gracefulLimit)
            logger.warning("\(error)")
            throw error
        }
    }
}

/// The services the group had to cancel: they had not stopped when the orderly shutdown's time was up.
struct ShutdownOverrun: Error, CustomStringConvertible {
    var services: [String]
    var limit: Duration

    var description: String {
        "the orderly stop took longer than \(limit.components.seconds) s; cancelled: \(services.joined(separator: ", "))"
    }
}

/// Runs a service for the group and notes it when its task was cancelled: the group cancels only
/// what is still running once the graceful shutdown's bound has passed.
private struct CancellationWatch: Service, CustomStringConvertible {
    let service: any Service
    let cancelled: LockedValue<[String]>

    /// The group's own log lines name the service watched, not the watch.
    var description: String { "\(service)" }

    func run() async throws {
        defer {
            if Task.isCancelled { cancelled.withLock { $0.append(String(describing: type(of: service))) } }
        }
        try await service.run()
    }
}
