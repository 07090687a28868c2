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
