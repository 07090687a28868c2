import MediaAsset
public import MediaTime
public import MediaSinks

/// What happens to a player and its items, observable as an `AsyncSequence` (``Player/events``).
public enum PlayerEvent: Sendable {
    /// An item became ready or failed.
    case itemStatusChanged(PlayerItem, PlayerItem.Status)
    /// The player's own status changed.
    case playerStatusChanged(Player.Status)
    /// The current item changed (advance, replace, removal), `nil` when the queue ran empty.
    case currentItemChanged(PlayerItem?)
    /// The rate changed: 0 is paused.
    case rateChanged(Double)
    /// The item's last frame was presented and its time ran out.
    case didPlayToEndTime(PlayerItem)
    /// The item stopped before its end: it failed to load while current, or reading failed.
    case failedToPlayToEndTime(PlayerItem, MediaError)
    /// Playback ran out of decoded frames and is waiting (network or slow decode).
    case playbackStalled(PlayerItem)
    /// A seek finished (`true`) or was superseded (`false`).
    case seekCompleted(PlayerItem, MediaTime, finished: Bool)
    /// ``Player/timeControlStatus`` changed: paused, waiting (and why), or playing.
    case timeControlStatusChanged(TimeControlStatus)
}

/// One line of the presentation log: a presented frame or an event. See docs/presentation-log.md.
public enum PresentationRecord: Sendable {
    /// A frame became visible.
    case frame(PresentedFrame)
    /// Something happened to an item.
    case event(PresentationEvent)
}

/// A frame that became visible, with the clock facts to check timing and A/V sync.
public struct PresentedFrame: Sendable, Hashable {
    /// Counts items that became current, from 0.
    public var itemIndex: Int
    /// The item's URL or path.
    public var source: String
    /// The frame's presentation time in the item's timeline.
    public var presentationTime: MediaTime
    /// When it became visible (host time, ``MonotonicClock`` timeline).
    public var presentedAt: MediaTime
    /// The same instant on the wall clock (CLOCK_REALTIME, nanoseconds since the Unix epoch), so
    /// screens can be compared from their logs; `nil` when the player's clock has no wall clock.
    public var presentedWallClockTime: MediaTime?
    /// The refresh counter of the sink.
    public var refresh: UInt64
    /// The master clock's media time at that refresh.
    public var clock: MediaTime
    /// The audio clock's media time at that refresh, when audio is the master clock.
    public var audioClock: MediaTime?
    /// Frames decoded but never presented, in total since the player started.
    public var droppedFrames: Int
    /// The name of the display layer the frame was shown in (``PlayerLayer/name``; `screen` for a
    /// display's own full-screen layer), or nil when the video sink is no display layer.
    public var layer: String?
    /// For a player following a clock (the wall clock, for a schedule): its playback clock minus
    /// the followed clock at that refresh (positive: ahead). `nil` when nothing is followed.
    public var syncError: MediaTime?

    public init(
        itemIndex: Int, source: String, presentationTime: MediaTime, presentedAt: MediaTime, refresh: UInt64,
        clock: MediaTime, audioClock: MediaTime?, droppedFrames: Int, layer: String? = nil,
        presentedWallClockTime: MediaTime? = nil, syncError: MediaTime? = nil
    ) {
        self.layer = layer
        self.presentedWallClockTime = presentedWallClockTime
        self.syncError = syncError
        self.itemIndex = itemIndex
        self.source = source
        self.presentationTime = presentationTime
        self.presentedAt = presentedAt
        self.refresh = refresh
        self.clock = clock
        self.audioClock = audioClock
        self.droppedFrames = droppedFrames
    }
}

/// An event of the presentation log.
public struct PresentationEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case itemReady = "item_ready"
        case itemFailed = "item_failed"
        /// The item has an audio track that cannot be decoded and plays video-only (``PresentationEvent/reason`` says why).
        case audioUnavailable = "audio_unavailable"
        case boundaryCrossed = "boundary_crossed"
        case itemEnded = "item_ended"
        case seekDone = "seek_done"
        case stalled
        /// A scheduled overlay became visible with the frame at ``PresentationEvent/time`` (a show's log).
        case overlayShown = "overlay-shown"
        /// A scheduled overlay's time ran out: it starts fading out with the frame at ``PresentationEvent/time``.
        case overlayHidden = "overlay-hidden"
        /// A schedule file was read, validated and takes effect (``PresentationEvent/detail`` names it).
        case scheduleLoaded = "schedule-loaded"
        /// A changed schedule file was invalid and ignored; ``PresentationEvent/reason`` has its errors.
        case scheduleRejected = "schedule-rejected"
        /// A supervised show's item failed (``PresentationEvent/detail`` names the playlist item,
        /// ``PresentationEvent/reason`` the cause): it is held while the supervisor decides.
        case showItemFailed = "item-failed"
        /// A supervised show's item presented nothing new for too long (``PresentationEvent/delay``).
        case stall
        /// The held item is tried again after ``PresentationEvent/delay`` (retry number ``PresentationEvent/attempt``).
        case retry
        /// The held item's retries are spent: the show goes on with the next item.
        case skip
        /// The fallback playlist plays until the next entry change (``PresentationEvent/reason`` says why).
        case fallback
        /// The engine (player, its threads and outputs' connections) was built again inside the process.
        case pipelineRebuilt = "pipeline-rebuilt"
        /// A schedule's item presented its first frame (``PresentationEvent/entry``,
        /// ``PresentationEvent/playlist``, ``PresentationEvent/playlistIndex`` say which): proof of play.
        case itemStarted = "item-started"
        /// The wall clock jumped (``PresentationEvent/delay`` by how much): the show resolved its programme again.
        case clockStepped = "clock-step"
        /// The player following a clock changed its speed to ease an error out: ``PresentationEvent/error``
        /// measured, ``PresentationEvent/adjustment`` the new speed change (0: on time again).
        case syncAdjust = "sync-adjust"
        /// The player following a clock was too far off (``PresentationEvent/error``) and seeks to
        /// ``PresentationEvent/time``, where the reference will be when the seek shows.
        case syncSeek = "sync-seek"
        /// The sound became the master clock, in step with the picture (``PresentationEvent/time``:
        /// the media time heard then).
        case audioJoined = "audio-joined"
    }

    public var kind: Kind
    public var itemIndex: Int
    public var source: String
    /// The media time concerned (the mark, the seek target, the end).
    public var time: MediaTime?
    /// Host time of the event.
    public var at: MediaTime
    /// The failure's reason for `item_failed`, the errors for `schedule-rejected`.
    public var reason: String?
    /// What the event is about, in words (the overlay for `overlay-shown`, the file for `schedule-loaded`).
    public var detail: String?
    /// Which retry (`retry`, from 1).
    public var attempt: Int?
    /// How long: the wait before a `retry`, the time without a new frame for a `stall`.
    public var delay: MediaTime?
    /// `item-started`: the schedule entry (or `fallback`), the playlist and the item's index in it.
    public var entry: String?
    public var playlist: String?
    public var playlistIndex: Int?
    /// `sync-adjust`, `sync-seek`: the playback clock minus the reference (positive: ahead).
    public var error: MediaTime?
    /// `sync-adjust`: how much faster (positive) or slower playback now runs, as a fraction.
    public var adjustment: Double?
    /// The wall-clock time of ``at`` (CLOCK_REALTIME), for events of a player following the wall clock.
    public var wallClockTime: MediaTime?

    public init(kind: Kind, itemIndex: Int, source: String, time: MediaTime?, at: MediaTime, reason: String?, detail: String? = nil,
                attempt: Int? = nil, delay: MediaTime? = nil, entry: String? = nil, playlist: String? = nil, playlistIndex: Int? = nil) {
        self.detail = detail
        self.entry = entry
        self.playlist = playlist
        self.playlistIndex = playlistIndex
        self.attempt = attempt
        self.delay = delay
        self.kind = kind
        self.itemIndex = itemIndex
        self.source = source
        self.time = time
        self.at = at
        self.reason = reason
    }
}
