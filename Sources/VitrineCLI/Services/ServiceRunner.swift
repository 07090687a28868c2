import Logging
import ServiceLifecycle
import UnixSignals

/// Runs a command's services as one group, and stops them in order on SIGTERM or SIGINT, when
/// the first one ends by itself, or when one fails.
///
/// `services` are given in start order: the device services first, the one that drives them
/// (playback) last. Stopping goes the other way, one service after the other: playback stops,
/// then the display (the screen restored), then the sound (the PCM drained and closed), then the
/// presentation log (flushed). The whole shutdown is bounded: past ``gracefulLimit`` the services
/// are cancelled, and the command exits with an error.
enum ServiceRunner {
    /// How long an orderly shutdown may take before the services are cancelled.
    static let gracefulLimit: Duration = .seconds(10)

    /// Runs the group; returns when every service has stopped. Throws when a service failed or
    /// the shutdown ran past its bound.
    static func run(_ services: [any Service], logger: Logger) async throws {
        var configurations = services.dropLast().map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
        if let driver = services.last {
            configurations.append(.init(service: driver, successTerminationBehavior: .gracefullyShutdownGroup))
        }
        var configuration = ServiceGroupConfiguration(services: configurations, logger: logger)
        configuration.gracefulShutdownSignals = [.sigterm, .sigint]
        configuration.maximumGracefulShutdownDuration = gracefulLimit
        configuration.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: configuration).run()
    }
}
