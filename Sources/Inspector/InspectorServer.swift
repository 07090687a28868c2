import FoundationEssentials
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
public import ServiceLifecycle
import Threading

/// The request context: the client's address (for the lockout) and tight body limits.
struct InspectorContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The largest request body, in bytes: no endpoint takes one.
    var maxUploadSize: Int { 16 * 1024 }
}

/// The HTTP inspector inside the player (docs/inspector.md): Hummingbird 2 on its own event-loop
/// threads, HTTPS with the configured certificate (plain HTTP only on loopback or when the
/// configuration allows it), a bearer token on everything but `/healthz` and the page.
public struct InspectorServer: Service, CustomStringConvertible {
    let application: Application<RouterResponder<InspectorContext>>
    /// Where the request handlers run (JSON, PNG encoding): an idle-class thread like the event loop.
    let executor: ThreadExecutor
    public let settings: InspectorSettings

    public var description: String { "inspector \(settings.host):\(settings.port)" }

    /// Checks the settings, reads the token and the certificate; throws what stops the inspector
    /// from starting (the player plays on without it).
    public init(settings: InspectorSettings, sources: InspectorSources, logger: Logger = Logger(label: "vitrine.inspector"),
                onListening: @escaping @Sendable (Int) async -> Void = { _ in }) throws(InspectorError) {
        guard !settings.isPlainHTTPOnNetwork else {
            throw InspectorError("listen = \"\(settings.host):\(settings.port)\" is not loopback and no tls_certificate/tls_key is set: the token would cross the network in clear text (set allow_plain_http = true to accept that)")
        }
        let token = try TokenFile.read(settings.tokenFile)
        let router = Router(context: InspectorContext.self)
        router.add(middleware: BearerTokenMiddleware(token: token, limiter: FailureLimiter(limit: settings.failuresBeforeLockout)))
        InspectorRoutes(sources: sources, started: ContinuousClock.now).register(on: router)

        let headLimit = TimeAmount.seconds(Int64(settings.requestHeadSeconds))
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestHeadDeadline(limit: headLimit)],
            idleTimeout: .seconds(Int64(settings.idleTimeoutSeconds)),
            httpDecoderConfiguration: .init(maxHeaderFieldSize: settings.maximumHeaderBytes, maxHeaderListSize: settings.maximumHeaderBytes,
                                            maxHeaderFieldCount: 100))
        let server: HTTPServerBuilder
        if let certificate = settings.tlsCertificate, let key = settings.tlsKey {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
                let privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
                var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(privateKey))
                tls.minimumTLSVersion = .tlsv12
                server = try .tls(.http1(configuration: http), tlsConfiguration: tls)
            } catch {
                throw InspectorError("cannot use the TLS certificate \(certificate) and key \(key): \(error)")
            }
        } else {
            server = .http1(configuration: http)
        }
        var configuration = ApplicationConfiguration(address: .hostname(settings.host, port: settings.port), serverName: "vitrine")
        configuration.availableConnectionsDelegate = MaximumAvailableConnections(settings.maximumConnections)
        configuration.backlog = 1024
        FileDescriptorLimit.raise(toAtLeast: settings.maximumConnections + 256)
        // One event-loop thread and one thread for the handlers' async work (not the cooperative
        // pool the player shares), both in SCHED_IDLE: however hard the inspector is asked, it
        // runs only on CPU time the render, decode and audio threads leave. A nice value was not
        // enough: at +10 a 50-connection flood still cost a saturated machine 80-130 frames in
        // 20 s, in SCHED_IDLE 14-28 (about the quiet figure).
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        group.next().execute { ThreadPriority.makeCurrentIdle() }
        do {
            executor = try ThreadExecutor(name: "vitrine-inspect", idle: true)
        } catch {
            throw InspectorError("\(error)")
        }
        application = Application(router: router, server: server, configuration: configuration,
                                  onServerRunning: { channel in await onListening(channel.localAddress?.port ?? settings.port) },
                                  eventLoopGroupProvider: .shared(group), logger: logger)
        self.settings = settings
    }

    public func run() async throws {
        try await withTaskExecutorPreference(executor) {
            try await application.run()
        }
    }
}
