internal import CALSA

/// alsa-lib prints its own error lines to standard error (`ALSA lib pcm.c:…: Unknown PCM …`) on
/// every failed open. The audio and capture threads try a missing device again every second: on a
/// box without a sound card that would be a journal line a second, each saying what the player's
/// own log already said once. The retries run with alsa-lib's per-thread error handler set to
/// one that drops the line; the error itself still comes back from the call and decides what
/// happens.
enum ALSAQuietErrors {
    /// Runs `body` with alsa-lib's messages on this thread dropped, then puts the previous
    /// per-thread handler back.
    static func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let previous = snd_lib_error_set_local { _, _, _, _, _, _ in }
        defer { _ = snd_lib_error_set_local(previous) }
        return try body()
    }
}
