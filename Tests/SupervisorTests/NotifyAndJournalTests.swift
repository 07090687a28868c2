import ChildProcesses
import Foundation
import Logging
import Supervisor
import Testing

@Suite("systemd notify protocol")
struct NotifyTests {
    @Test("READY, STATUS, WATCHDOG and STOPPING arrive as KEY=value lines, on a path and on an abstract socket", arguments: [false, true])
    func messages(abstract: Bool) throws {
        let receiver = try DatagramReceiver(abstract: abstract)
        let notifier = SystemdNotifier(socketPath: receiver.path)
        notifier.ready(status: "playing lobby: item 2, 00:01:05")
        #expect(receiver.receive().map { String(decoding: $0, as: UTF8.self) } == "READY=1\nSTATUS=playing lobby: item 2, 00:01:05\n")
        notifier.watchdog()
        #expect(receiver.receive().map { String(decoding: $0, as: UTF8.self) } == "WATCHDOG=1\n")
        notifier.status("a line\nwith a newline")
        #expect(receiver.receive().map { String(decoding: $0, as: UTF8.self) } == "STATUS=a line with a newline\n")
        notifier.stopping()
        #expect(receiver.receive().map { String(decoding: $0, as: UTF8.self) } == "STOPPING=1\n")
    }

    @Test("without NOTIFY_SOCKET nothing is sent; a socket nobody listens on does not block or fail loudly")
    func inactive() {
        #expect(!SystemdNotifier(socketPath: nil).send(["READY=1"]))
        #expect(!SystemdNotifier(socketPath: "/nonexistent/notify").send(["READY=1"]))
    }

    @Test("WATCHDOG_USEC is honoured only for this process (WATCHDOG_PID)")
    func watchdogInterval() {
        setenv("NOTIFY_SOCKET", "@vitrine-test", 1)
        setenv("WATCHDOG_USEC", "30000000", 1)
        setenv("WATCHDOG_PID", String(getpid()), 1)
        #expect(SystemdNotifier.fromEnvironment().watchdogInterval == .seconds(30))
        setenv("WATCHDOG_PID", String(getpid() + 1), 1)
        #expect(SystemdNotifier.fromEnvironment().watchdogInterval == nil)
        unsetenv("WATCHDOG_PID")
        #expect(SystemdNotifier.fromEnvironment().socketPath == "@vitrine-test")
        unsetenv("NOTIFY_SOCKET")
        unsetenv("WATCHDOG_USEC")
        #expect(!SystemdNotifier.fromEnvironment().isActive)
    }
}

@Suite("journal log handler")
struct JournalTests {
    /// The fields of a native journal datagram (both the KEY=value and the binary-length form).
    static func fields(_ bytes: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        var index = 0
        while index < bytes.count {
            guard let end = bytes[index...].firstIndex(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\n") }) else { break }
            let name = String(decoding: bytes[index..<end], as: UTF8.self)
            if bytes[end] == UInt8(ascii: "=") {
                let lineEnd = bytes[end...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                fields[name] = String(decoding: bytes[(end + 1)..<lineEnd], as: UTF8.self)
                index = lineEnd + 1
            } else {
                var length: UInt64 = 0
                for offset in 0..<8 { length |= UInt64(bytes[end + 1 + offset]) << (8 * UInt64(offset)) }
                let start = end + 9
                fields[name] = String(decoding: bytes[start..<(start + Int(length))], as: UTF8.self)
                index = start + Int(length) + 1
            }
        }
        return fields
    }

    @Test("a message becomes one native entry: MESSAGE, PRIORITY, the code position and metadata as VITRINE_ fields")
    func nativeEntry() throws {
        let receiver = try DatagramReceiver()
        var logger = Logger(label: "vitrine.show") { JournalLogHandler(label: $0, socketPath: receiver.path) }
        logger[metadataKey: "entry"] = "lobby"
        logger.warning("item failed\nsecond line", metadata: ["item": "2", "media": "/srv/a.mp4", "odd-key": "x"])
        let fields = Self.fields(try #require(receiver.receive()))
        #expect(fields["MESSAGE"] == "item failed\nsecond line")
        #expect(fields["PRIORITY"] == "4")
        #expect(fields["SYSLOG_IDENTIFIER"] == "vitrine")
        #expect(fields["VITRINE_LOGGER"] == "vitrine.show")
        #expect(fields["VITRINE_ENTRY"] == "lobby")
        #expect(fields["VITRINE_ITEM"] == "2")
        #expect(fields["VITRINE_MEDIA"] == "/srv/a.mp4")
        #expect(fields["VITRINE_ODD_KEY"] == "x")
        #expect(fields["CODE_FILE"]?.hasSuffix("NotifyAndJournalTests.swift") == true)
        #expect(fields["CODE_LINE"].flatMap(Int.init) != nil)
        #expect(fields["CODE_FUNC"] == "nativeEntry()")
    }

    @Test("levels map to syslog priorities; below the handler's level nothing is sent")
    func priorities() throws {
        let receiver = try DatagramReceiver()
        var logger = Logger(label: "vitrine") { JournalLogHandler(label: $0, socketPath: receiver.path) }
        logger.logLevel = .info
        logger.debug("not sent")
        logger.error("sent")
        logger.critical("also sent")
        #expect(Self.fields(try #require(receiver.receive()))["PRIORITY"] == "3")
        #expect(Self.fields(try #require(receiver.receive()))["PRIORITY"] == "2")
    }
}
