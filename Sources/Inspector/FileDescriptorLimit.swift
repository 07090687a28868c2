#if canImport(Glibc)
import Glibc
#endif

/// The process's open-file limit: systemd starts services with a soft limit of 1,024, fewer than
/// the inspector's connections plus the player's own files need.
enum FileDescriptorLimit {
    /// Raises the soft limit to `wanted` (never above the hard limit, never lowering it).
    static func raise(toAtLeast wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
