public import MediaAsset
public import FoundationEssentials
public import MediaTime
import Synchronization
public import MediaSinks
import Threading

/// One track of an item, which can be switched off (disable the audio track to play muted).
public struct PlayerItemTrack: Sendable, Hashable, Identifiable {
    public enum MediaType: String, Sendable, Hashable {
        case video, audio, subtitle, other

        /// The kind of an asset's track (data streams are `other`).
        init(_ type: MediaAsset.MediaType) {
            switch type {
            case .video: self = .video
            case .audio: self = .audio
            case .subtitle: self = .subtitle
            case .data: self = .other
            }
        }
    }

    /// The stream index in the container.
    public let id: Int
    public let mediaType: MediaType
    /// FFmpeg's codec name (`h264`, `aac`...).
    public let codecName: String
    /// ISO 639 language code from the container, if any.
    public let languageCode: String?
    /// Whether the engine decodes this track when it is enabled (the best video and audio stream).
    public let isPlayable: Bool
    /// Whether the track is played. Change it with ``PlayerItem/setTrack(_:enabled:)``.
    public var isEnabled: Bool
}

/// A piece of media to play, with its timing and status: the engine's `AVPlayerItem`.
///
/// The item opens its input when a player starts to prepare it (as the current item, or as the
/// next one of a ``QueuePlayer`` so it is ready before the current one ends). All properties are
/// safe to read from any thread; changes are announced on ``statusUpdates``.
public final class PlayerItem: Sendable, CustomStringConvertible {
    /// Whether the item can be played.
    public enum Status: String, Sendable, Hashable {
        /// Not loaded yet.
        case unknown
        /// The first video frame is decoded, audio is primed, and every key of
        /// ``PlayerItem/automaticallyLoadedAssetKeys`` is loaded.
        case readyToPlay
        /// The item cannot be played; ``PlayerItem/error`` says why.
        case failed
    }

    /// What FFmpeg opens: a path for local files, the URL text otherwise.
    public let url: String
    /// The asset the item was made from, if any.
    public let asset: Asset?
    /// The asset properties (``AssetProperty`` names) loaded before the item becomes ready.
    public let automaticallyLoadedAssetKeys: [String]

    struct State {
        var status: Status = .unknown
        var error: MediaError?
        var duration: MediaTime = .indefinite
        var presentationSize: (width: Int, height: Int) = (0, 0)
        var tracks: [PlayerItemTrack] = []
        var loadedUntil: MediaTime = .zero
        var isSeekable = false
        var hasVideo = false
        var hasAudio = false
        var audioTrackError: MediaError?
        var audioEnabled = true
        var pipeline: ItemPipeline?
        /// Where playback starts when the item becomes current (seeks before it is played).
        var startTime: MediaTime = .zero
        /// How long a single picture (a still image) stays on screen.
        var stillImageDuration: MediaTime?
        /// Where forward playback ends (``MediaTime/invalid``: at the end of the media).
        var forwardPlaybackEndTime: MediaTime = .invalid
        /// Where reverse playback ends (``MediaTime/invalid``: at the start of the media).
        var reversePlaybackEndTime: MediaTime = .invalid
        /// Where the item's timeline sits on the wall clock, when pinned.
        var wallClockPin: WallClockPin?
        var selectedAudio: MediaSelectionOption?
        var selectedLegible: MediaSelectionOption?
        var legibleChosen = false
        weak var core: PlayerCore?
        /// Readiness needs both the pipeline and the asset keys: what each reported so far.
        var pipelineReady = false
        var pipelineFailure: MediaError?
        var keysLoaded = true
        var keyFailure: MediaError?
    }

    let state = LockedValue(State())
    private let statusHub = EventHub<Status>()

    /// An item for a local path or a URL FFmpeg can open (`file:`, `http:`, `rtsp:`...).
    public init(url: String) {
        self.url = url
        self.asset = nil
        self.automaticallyLoadedAssetKeys = []
    }

    /// An item for a URL (`file:` URLs play the file).
    public convenience init(url: URL) {
        self.init(asset: Asset(url: url))
    }

    /// An item for an asset.
    ///
    /// When a player prepares the item, the asset loads `automaticallyLoadedAssetKeys` (names of
    /// ``AssetProperty`` values: `duration`, `tracks`, `metadata`, `commonMetadata`,
    /// `availableMetadataFormats`, `isPlayable` — or AVFoundation's `playable` —,
    /// `mediaSelectionGroups`, `containerFormat`) while the item opens its input; the item
    /// becomes ``Status/readyToPlay`` only when they are loaded, so they can be read from the
    /// asset without waiting from then on. A key that fails to load (or an unknown name) fails
    /// the item with that error.
    public init(asset: Asset, automaticallyLoadedAssetKeys: [String] = []) {
        self.url = asset.source
        self.asset = asset
        self.automaticallyLoadedAssetKeys = automaticallyLoadedAssetKeys
    }

    /// A fresh item for the same media (used by looping: an item plays once).
    public func copy() -> PlayerItem {
        let item = asset.map { PlayerItem(asset: $0, automaticallyLoadedAssetKeys: automaticallyLoadedAssetKeys) } ?? PlayerItem(url: url)
        let (audioEnabled, still, forwardEnd, reverseEnd) = state.withLock {
            ($0.audioEnabled, $0.stillImageDuration, $0.forwardPlaybackEndTime, $0.reversePlaybackEndTime)
        }
        item.state.withLock {
            $0.audioEnabled = audioEnabled
            $0.stillImageDuration = still
            $0.forwardPlaybackEndTime = forwardEnd
            $0.reversePlaybackEndTime = reverseEnd
        }
        return item
    }

    public var description: String { "PlayerItem(\(url))" }

    /// For a still image (a PNG or JPEG: one picture), how long it stays on screen: its one frame gets
    /// this duration, so the item ends, and the next one starts, after it. `nil` (the default) keeps the
    /// media's own frame durations. Set it before the item is queued.
    public var stillImageDuration: MediaTime? {
        get { state.withLock { $0.stillImageDuration } }
        set { state.withLock { $0.stillImageDuration = newValue } }
    }

    public var status: Status { state.withLock { $0.status } }
    /// Why the item failed, naming the file and the cause.
    public var error: MediaError? { state.withLock { $0.error } }
    /// The duration; indefinite until known (and for live streams).
    public var duration: MediaTime { state.withLock { $0.duration } }
    /// The video's size in pixels (before rotation), zero until known.
    public var presentationSize: (width: Int, height: Int) { state.withLock { $0.presentationSize } }
    /// The tracks, known once the item is loaded.
    public var tracks: [PlayerItemTrack] { state.withLock { $0.tracks } }
    /// What has been read from the input so far: it grows while a network source buffers.
    public var loadedTimeRanges: [TimeRange] {
        state.withLock { $0.status == .unknown && $0.loadedUntil == .zero ? [] : [TimeRange(start: .zero, end: $0.loadedUntil)] }
    }
    /// Where a seek may go: the whole item when the input is seekable, else what is loaded.
    public var seekableTimeRanges: [TimeRange] {
        state.withLock {
            guard $0.status == .readyToPlay else { return [] }
            if $0.isSeekable, $0.duration.isNumeric { return [TimeRange(start: .zero, duration: $0.duration)] }
            return [TimeRange(start: .zero, end: $0.loadedUntil)]
        }
    }
    /// Reverse playback is not supported: rates below 0 are rejected.
    public var canPlayReverse: Bool { false }
    /// Rates above 1 (up to 2) are played by dropping video frames, with audio muted.
    public var canPlayFastForward: Bool { state.withLock { $0.status == .readyToPlay && $0.hasVideo } }
    public var canPlaySlowForward: Bool { state.withLock { $0.status == .readyToPlay && $0.hasVideo } }

    /// Each change of ``status``, from any thread or task.
    public var statusUpdates: AsyncStream<Status> { statusHub.stream() }

    /// The item's current time: the player's when it is the current item, else its start time.
    public func currentTime() -> MediaTime {
        let (core, start) = state.withLock { ($0.core, $0.startTime) }
        if let core, core.isCurrent(self) { return core.currentTime() }
        return start
    }

    /// Enables or disables a track. Disabling the audio track plays the item muted (its audio is
    /// not even decoded) and the display clock paces video.
    public func setTrack(_ trackID: Int, enabled: Bool) {
        let (pipeline, isAudio): (ItemPipeline?, Bool) = state.withLock { state in
            guard let index = state.tracks.firstIndex(where: { $0.id == trackID }) else {
                return (nil, false)
            }
            state.tracks[index].isEnabled = enabled
            let audio = state.tracks[index].mediaType == .audio && state.tracks[index].isPlayable
            if audio { state.audioEnabled = enabled }
            return (state.pipeline, audio)
        }
        if isAudio { pipeline?.setAudioEnabled(enabled) }
    }

    /// Disables (or re-enables) audio before the tracks are known: `PlayerItem(url:)` then
    /// `isAudioEnabled = false` plays muted from the first frame.
    public var isAudioEnabled: Bool {
        get { state.withLock { $0.audioEnabled } }
        set {
            let pipeline = state.withLock { state -> ItemPipeline? in
                state.audioEnabled = newValue
                for index in state.tracks.indices where state.tracks[index].mediaType == .audio && state.tracks[index].isPlayable {
                    state.tracks[index].isEnabled = newValue
                }
                return state.pipeline
            }
            pipeline?.setAudioEnabled(newValue)
        }
    }

    // MARK: Out points

    /// The time at which forward playback ends, as `AVPlayerItem.forwardPlaybackEndTime`:
    /// ``MediaTime/invalid`` (the default) plays to the end of the media.
    ///
    /// The item ends there exactly as at the end of its media: the last frame that starts before
    /// the out point is shown until the out point (its own end, when that comes first), the sound
    /// is cut at the sample nearest it, and a queue goes on into the next item without a gap — its
    /// sound follows with no flush, its first frame comes at the refresh the out point reaches.
    /// Nothing at or past the out point is decoded. Set it before the item plays; a later out
    /// point set while it plays takes effect only for what is still to be decoded (seek to apply
    /// it to what already ended).
    public var forwardPlaybackEndTime: MediaTime {
        get { state.withLock { $0.forwardPlaybackEndTime } }
        set {
            let pipeline = state.withLock { state -> ItemPipeline? in
                state.forwardPlaybackEndTime = newValue
                return state.pipeline
            }
            pipeline?.setEndTime(newValue.isNumeric ? newValue : nil)
        }
    }

    /// The time at which reverse playback ends, as `AVPlayerItem.reversePlaybackEndTime`:
    /// ``MediaTime/invalid`` (the default) is the start of the media. Vitrine plays forward only
    /// (rates 0 to 4), so it bounds nothing yet; it is kept with the item and its copies.
    public var reversePlaybackEndTime: MediaTime {
        get { state.withLock { $0.reversePlaybackEndTime } }
        set { state.withLock { $0.reversePlaybackEndTime = newValue } }
    }

    // MARK: The wall clock

    /// Where this item's timeline sits on the wall clock: its media time `time` is due at the
    /// wall-clock instant `wallClockTime`. A player whose ``Player/sourceClock`` is
    /// ``PlaybackSourceClock/wallClock(offset:)`` follows it when the item becomes current (a
    /// schedule pins each item where its programme puts it, so screens agree on every frame). An
    /// item without one goes on from the item before it, or is pinned where it first shows.
    /// Set it before the item becomes current; a copy (``copy()``) is not pinned.
    public var wallClockPin: WallClockPin? {
        get { state.withLock { $0.wallClockPin } }
        set { state.withLock { $0.wallClockPin = newValue } }
    }

    // MARK: Media selection

    /// Selects an audio language (`.audible` group) or a subtitle track (`.legible` group; `nil`
    /// turns subtitles off). Subtitles reach the video sink as ``SubtitleContent`` with the
    /// frames. Switching audio while playing re-syncs at the current time (a short exact seek).
    /// Get the groups from the asset: `try await Asset(...).load(.mediaSelectionGroups)`.
    public func select(_ option: MediaSelectionOption?, in group: MediaSelectionGroup) {
        switch group.characteristic {
        case .audible:
            guard let option, option.mediaType == .audio else { return }
            let (pipeline, core) = state.withLock { state -> (ItemPipeline?, PlayerCore?) in
                state.selectedAudio = option
                return (state.pipeline, state.core)
            }
            guard let pipeline else { return }
            pipeline.selectAudioStream(option.trackID)
            let now = currentTime()
            if let core, core.seek(item: self, to: now, exact: true, completion: nil) { return }
            pipeline.seek(to: now, exact: true)
        case .legible:
            let pipeline = state.withLock { state -> ItemPipeline? in
                state.selectedLegible = option
                state.legibleChosen = true
                return state.pipeline
            }
            pipeline?.selectSubtitleStream(option?.trackID)
        }
    }

    /// The selected option of a group: the chosen one, else the group's default (audio) or none
    /// (subtitles).
    public func selectedMediaOption(in group: MediaSelectionGroup) -> MediaSelectionOption? {
        state.withLock { state in
            switch group.characteristic {
            case .audible: return state.selectedAudio ?? group.defaultOption
            case .legible: return state.legibleChosen ? state.selectedLegible : nil
            }
        }
    }

    // MARK: Seeking

    /// Seeks within the item. With both tolerances zero the exact frame is shown (decoded and
    /// discarded up to the target); otherwise playback resumes at the keyframe at or before the
    /// target. The handler gets `true` when the seek finished (first frame after it presented),
    /// `false` when a later seek or ``cancelPendingSeeks()`` superseded it.
    public func seek(
        to time: MediaTime, toleranceBefore: MediaTime = .positiveInfinity, toleranceAfter: MediaTime = .positiveInfinity,
        completionHandler: (@Sendable (Bool) -> Void)? = nil
    ) {
        let exact = toleranceBefore == .zero && toleranceAfter == .zero
        let core = state.withLock { $0.core }
        if let core, core.seek(item: self, to: time, exact: exact, completion: completionHandler) { return }
        state.withLock { $0.startTime = time }
        completionHandler?(true)
    }

    /// ``seek(to:toleranceBefore:toleranceAfter:completionHandler:)`` awaiting its completion.
    @discardableResult
    public func seek(to time: MediaTime, toleranceBefore: MediaTime = .positiveInfinity, toleranceAfter: MediaTime = .positiveInfinity) async -> Bool {
        await withCheckedContinuation { continuation in
            seek(to: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter) { continuation.resume(returning: $0) }
        }
    }

    /// Completes every pending seek of this item with `false`.
    public func cancelPendingSeeks() {
        state.withLock { $0.core }?.cancelPendingSeeks(item: self)
    }

    // MARK: Engine side

    /// Opens the input and starts decoding (idempotent). Called by the player.
    func prepare(core: PlayerCore, audioFormat: AudioFormat) -> ItemPipeline? {
        let (pipeline, start, isNew): (ItemPipeline?, MediaTime, Bool) = state.withLock { state in
            state.core = core
            if state.status == .failed { return (nil, .zero, false) }
            if let existing = state.pipeline { return (existing, .zero, false) }
            let pipeline = ItemPipeline(
                source: url, audioFormat: audioFormat, audioEnabled: state.audioEnabled, niceSteps: ItemPipeline.playbackNiceSteps,
                stillImageDuration: state.stillImageDuration,
                endTime: state.forwardPlaybackEndTime.isNumeric ? state.forwardPlaybackEndTime : nil
            ) { [weak self] event in
                self?.handle(event)
            }
            pipeline.preselect(audioStream: state.selectedAudio?.trackID, subtitleStream: state.selectedLegible?.trackID)
            state.pipeline = pipeline
            state.pipelineReady = false
            state.pipelineFailure = nil
            if asset != nil && !automaticallyLoadedAssetKeys.isEmpty { state.keysLoaded = false }
            return (pipeline, state.startTime, true)
        }
        if isNew, let pipeline {
            if start != .zero { pipeline.seek(to: start, exact: true) }
            pipeline.start()
            if let asset, !automaticallyLoadedAssetKeys.isEmpty { loadKeys(of: asset) }
        }
        return pipeline
    }

    /// Loads the automatically loaded keys alongside the pipeline's own open.
    private func loadKeys(of asset: Asset) {
        let keys = automaticallyLoadedAssetKeys
        Task.detached { [weak self] in
            var failure: MediaError?
            for key in keys {
                do throws(MediaError) {
                    try await Self.load(key, of: asset)
                } catch {
                    failure = error
                    break
                }
            }
            guard let self else { return }
            self.state.withLock { state in
                state.keysLoaded = true
                state.keyFailure = failure
            }
            self.resolveStatus()
        }
    }

    /// Loads one asset property by its name.
    static func load(_ key: String, of asset: Asset) async throws(MediaError) {
        switch key {
        case "duration": _ = try await asset.load(.duration)
        case "tracks": _ = try await asset.load(.tracks)
        case "metadata": _ = try await asset.load(.metadata)
        case "commonMetadata": _ = try await asset.load(.commonMetadata)
        case "availableMetadataFormats": _ = try await asset.load(.availableMetadataFormats)
        case "isPlayable", "playable": _ = try await asset.load(.isPlayable)
        case "mediaSelectionGroups": _ = try await asset.load(.mediaSelectionGroups)
        case "containerFormat": _ = try await asset.load(.containerFormat)
        default:
            throw MediaError(source: asset.source, operation: "cannot load", reason: .invalidRequest, detail: "(unknown asset key \"\(key)\")")
        }
    }

    /// Settles the status once the pipeline and the asset keys have both answered: a key's
    /// failure first (the item fails with the asset's error), then the pipeline's outcome.
    private func resolveStatus() {
        let outcome: Status? = state.withLock { state in
            guard state.status == .unknown else { return nil }
            if let failure = state.keyFailure {
                state.status = .failed
                state.error = failure
                return .failed
            }
            guard state.keysLoaded else { return nil }
            if let failure = state.pipelineFailure {
                state.status = .failed
                state.error = failure
                return .failed
            }
            guard state.pipelineReady else { return nil }
            state.status = .readyToPlay
            return .readyToPlay
        }
        guard let outcome else { return }
        statusHub.emit(outcome)
        state.withLock { $0.core }?.itemStatusChanged(self)
    }

    var pipeline: ItemPipeline? { state.withLock { $0.pipeline } }

    /// Restarts a prepared item's decoding at its start time (its first audio was already played
    /// ahead of a seam that then did not happen).
    func rewind() {
        let (pipeline, start) = state.withLock { ($0.pipeline, $0.startTime) }
        pipeline?.seek(to: start, exact: true)
    }

    /// Stops decoding and releases the input (the item was removed or finished).
    func release() {
        let pipeline = state.withLock { state -> ItemPipeline? in
            defer { state.pipeline = nil; state.core = nil }
            return state.pipeline
        }
        pipeline?.stop()
    }

    /// Marks the item failed (open error, read error, or removed while loading).
    func fail(_ error: MediaError) {
        let changed = state.withLock { state -> Bool in
            guard state.status != .failed else { return false }
            state.status = .failed
            state.error = error
            return true
        }
        if changed {
            statusHub.emit(.failed)
            state.withLock { $0.core }?.itemStatusChanged(self)
        }
    }

    private func handle(_ event: ItemPipeline.Event) {
        switch event {
        case .opened(let info):
            state.withLock { state in
                state.duration = info.duration
                state.presentationSize = info.presentationSize
                state.isSeekable = info.isSeekable
                state.hasVideo = info.hasVideo
                state.hasAudio = info.hasAudio
                state.audioTrackError = info.audioTrackError
                state.tracks = info.tracks.map {
                    PlayerItemTrack(
                        id: $0.streamIndex, mediaType: $0.mediaType, codecName: $0.codecName, languageCode: $0.languageCode,
                        isPlayable: $0.isPlayable,
                        isEnabled: $0.mediaType == .audio && $0.isPlayable ? state.audioEnabled : $0.isPlayable)
                }
            }
        case .ready:
            state.withLock { $0.pipelineReady = true }
            resolveStatus()
        case .failed(let error):
            // Before readiness it waits for the asset keys (whose error names the cause first);
            // after it, the item fails at once.
            let waiting = state.withLock { state -> Bool in
                state.pipelineFailure = error
                return state.status == .unknown
            }
            if waiting { resolveStatus() } else { fail(error) }
        case .loaded(let until):
            state.withLock { if until.isNumeric, until > $0.loadedUntil { $0.loadedUntil = until } }
        }
    }

    var hasVideo: Bool { state.withLock { $0.hasVideo } }

    /// Why the item's audio track is not played although it has one (FFmpeg has no decoder for
    /// its codec): the item plays video-only, paced by the display clock. `nil` when the audio
    /// plays, when there is no audio track, and before the item is opened.
    public var audioTrackError: MediaError? { state.withLock { $0.audioTrackError } }
}
