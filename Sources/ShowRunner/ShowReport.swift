public import MediaTime

/// One item of a schedule's playlist: what a retry plays again and what the supervisor counts.
public struct ProgrammeItem: Sendable, Hashable, CustomStringConvertible {
    /// The playlist's name.
    public var playlist: String
    /// The item's index in the playlist, from 0.
    public var index: Int
    /// The item's file or URL.
    public var source: String

    public init(playlist: String, index: Int, source: String) {
        self.playlist = playlist
        self.index = index
        self.source = source
    }

    /// "lobby[1] (media/welcome.mp4)": how the presentation log and the journal name it.
    public var description: String { "\(playlist)[\(index)] (\(source))" }
}

/// What a supervised show tells its supervisor (``ShowRunner/supervisionReports()``), in order.
///
/// After `itemFailed` and `itemStalled` the show holds: the failed item stays current, nothing
/// more is presented (the last good picture stays on screen, its overlays are taken down) and
/// nothing follows it until the supervisor answers with ``ShowRunner/retry(attempt:after:)``,
/// ``ShowRunner/skip()`` or ``ShowRunner/playFallback(reason:)`` — or the programme changes entry,
/// which ends the hold by itself (and is reported as `entryChanged`).
public enum ShowReport: Sendable, Hashable {
    /// The current item could not be opened or decoded, or stopped before its end.
    case itemFailed(ProgrammeItem, reason: String)
    /// The current item presented nothing new for longer than it needs: its first frame did not
    /// come within ``ShowRunner/Configuration/firstFrameTimeout``, or its video ran out of frames
    /// before its end for longer than ``ShowRunner/Configuration/stallTimeout`` while playing.
    case itemStalled(ProgrammeItem, waited: MediaTime)
    /// The item presents: its retries and the run of failed items start over.
    case itemPlaying(ProgrammeItem)
    /// The winning entry changed (a window opened or closed, an interrupt began or ended, the
    /// schedule changed): the fallback gives way to the programme and every count starts over.
    case entryChanged(String)
    /// The engine's output failed for good (the display or the audio output reported it cannot go
    /// on): the pipeline must be rebuilt.
    case outputFailed(reason: String)
}
