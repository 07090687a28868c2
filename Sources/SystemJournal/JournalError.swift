public import SystemPackage

/// Why the journal could not be opened or read. sd-journal reports failures as negative `errno`
/// values; `errno` keeps that meaning (`ENOENT`: no journal there, `EACCES`: files the user may not
/// read, `EBUSY`: too many reads at once), `operation` names the call and `reason` (the
/// description) says it in words an operator can act on.
public struct JournalError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failed call (`sd_journal_open_directory`, `sd_journal_previous`, …).
    public var operation: String
    public var errno: Errno
    /// The file or directory concerned, when there is one.
    public var path: FilePath?
    public var reason: String

    public init(operation: String, errno: Errno, path: FilePath? = nil, reason: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.path = path
        self.reason = reason ?? "\(operation)\(path.map { " \($0)" } ?? ""): \(errno)"
    }

    /// From an sd-journal return value (a negative `errno`).
    init(operation: String, result: Int32, path: FilePath? = nil, reason: String? = nil) {
        self.init(operation: operation, errno: Errno(rawValue: -result), path: path, reason: reason)
    }

    /// Whether the journal is there but this user may not read it (not in the `systemd-journal` group).
    public var isPermissionProblem: Bool { errno == .permissionDenied || errno == .notPermitted }

    public var description: String { reason }
}
