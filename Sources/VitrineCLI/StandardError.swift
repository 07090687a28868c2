import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one line to standard error (file descriptor 2, unbuffered).
func printError(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
        if written <= 0 { return }
        offset += written
    }
}

/// What went wrong with a file, for an operator: the system's words for a file error Foundation
/// wraps ("Not a directory", "Permission denied"), anything else as it describes itself.
func fileProblem(_ error: any Error) -> String {
    if let error = error as? CocoaError, let cause = error.underlying as? POSIXError {
        return String(cString: strerror(cause.code.rawValue))
    }
    return "\(error)"
}
