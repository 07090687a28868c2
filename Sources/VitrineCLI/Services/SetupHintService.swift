import Bundles
import Config
import Displays
import Logging
import MediaSinks
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// On a screen nobody configured yet (`vitrine play --config` with no bundle imported), a line at
/// the top of the screen says how to give it content: plug in a USB stick with a signed bundle, or
/// open the inspector — at the addresses the machine has, once the network has given it one. The
/// line goes as soon as a bundle is current. Looked at every 5 s (addresses come and go with DHCP).
struct SetupHintService: Service, CustomStringConvertible {
    let store: BundleStore
    let display: any Display
    let inspector: Configuration.Inspector?
    let logger: Logger

    var description: String { "setup hint" }

    func run() async throws {
        await cancelWhenGracefulShutdown { [store, display, inspector, logger] in
            var shown: (id: OverlayID, text: String)?
            while !Task.isCancelled {
                let text = store.currentSchedule == nil ? Self.hint(inspector: inspector, addresses: NetworkAddresses.current()) : nil
                if text != shown?.text {
                    if let text {
                        var layer = Self.layer(text, screenHeight: display.outputSize.height)
                        layer.frame = display.screenFrame(layer.frame)
                        let added = display.layers.add(layer)
                        logger.info("shown on screen: \(text)")
                        if let shown { display.layers.remove(shown.id) }
                        shown = (added, text)
                    } else if let old = shown {
                        logger.info("a bundle is current: the setup hint is gone")
                        display.layers.remove(old.id)
                        shown = nil
                    }
                }
                try? await Task.sleep(for: .seconds(5))
            }
            if let shown { display.layers.remove(shown.id) }
        }
    }

    /// What the line says: the stick always; the inspector's URL when it listens beyond loopback.
    static func hint(inspector: Configuration.Inspector?, addresses: [String]) -> String {
        let stick = "Not configured yet: plug in a USB stick with a signed Vitrine bundle"
        guard let inspector, let listen = inspector.listen, !listen.isLoopback else { return stick }
        let scheme = inspector.tlsCertificate != nil ? "https" : "http"
        let hosts: [String]
        if listen.host == "0.0.0.0" || listen.host == "::" {
            hosts = addresses.filter { listen.host == "::" || !$0.contains(":") }
        } else {
            hosts = [listen.host]
        }
        guard !hosts.isEmpty else { return stick + ", or open the inspector on port \(listen.port) once the network is up" }
        let urls = hosts.prefix(2).map { host in "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(listen.port)/" }
        return stick + ", or open " + urls.joined(separator: " or ")
    }

    static func layer(_ text: String, screenHeight: Int) -> OverlayLayer {
        let pixels = max(12, screenHeight / 36)
        return OverlayLayer(
            .text(text, TextStyle(pixelSize: pixels, color: .white, background: RGBAColor(red: 0, green: 0, blue: 0, alpha: 200),
                                  alignment: .center, padding: pixels / 3)),
            frame: .relative(x: 0.02, y: 0.02, width: 0.96, height: 0.07), zIndex: 999_999)
    }
}

/// The machine's addresses other than loopback and IPv6 link-local ones, IPv4 first, numeric.
enum NetworkAddresses {
    static func current() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var v4: [String] = [], v6: [String] = []
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, current.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0,
                  current.pointee.ifa_flags & UInt32(IFF_UP) != 0 else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if family == AF_INET { v4.append(text) } else if !text.lowercased().hasPrefix("fe80") { v6.append(text) }
        }
        return v4 + v6
    }
}
