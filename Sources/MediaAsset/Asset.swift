public import FoundationEssentials
public import MediaTime
internal import Dispatch
internal import Synchronization
public import MediaSinks
import Threading

/// A property of an ``Asset`` that loads asynchronously, typed by its value.
///
/// Use the static members: `try await asset.load(.duration, .tracks)`.
public struct AssetProperty<Value: Sendable>: Sendable, Hashable, CustomStringConvertible {
    /// The property's name, e.g. "duration".
    public let name: String
    let extract: @Sendable (AssetDescription) -> Value

    init(_ name: String, _ extract: @escaping @Sendable (AssetDescription) -> Value) {
        self.name = name
        self.extract = extract
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    public var description: String { name }
}

extension AssetProperty where Value == MediaTime {
    /// The container's duration; ``MediaTime/indefinite`` for live streams.
    public static var duration: AssetProperty<MediaTime> { .init("duration") { $0.duration } }
}

extension AssetProperty where Value == [AssetTrack] {
    /// Every stream, in container order.
    public static var tracks: AssetProperty<[AssetTrack]> { .init("tracks") { $0.tracks } }
}

extension AssetProperty where Value == [MetadataItem] {
    /// Container metadata in its own key space, plus cover art.
    public static var metadata: AssetProperty<[MetadataItem]> { .init("metadata") { $0.metadata } }
    /// The metadata items that have a common key (title, artist, album, creation date, description, artwork ...).
    public static var commonMetadata: AssetProperty<[MetadataItem]> { .init("commonMetadata") { $0.commonMetadata } }
}

extension AssetProperty where Value == [MetadataFormat] {
    /// The key spaces present in ``metadata``.
    public static var availableMetadataFormats: AssetProperty<[MetadataFormat]> {
        .init("availableMetadataFormats") { $0.availableMetadataFormats }
    }
}

extension AssetProperty where Value == Bool {
    /// Whether at least one audio or video track can be decoded.
    public static var isPlayable: AssetProperty<Bool> { .init("isPlayable") { $0.isPlayable } }
}

extension AssetProperty where Value == [MediaSelectionGroup] {
    /// Groups of alternative audio (audible) and subtitle (legible) tracks.
    public static var mediaSelectionGroups: AssetProperty<[MediaSelectionGroup]> {
        .init("mediaSelectionGroups") { $0.mediaSelectionGroups }
    }
}

extension AssetProperty where Value == ContainerFormat {
    /// The container format: names, start time, bit rate.
    public static var containerFormat: AssetProperty<ContainerFormat> { .init("containerFormat") { $0.format } }
}

/// Where the loading of one property stands.
public enum AssetPropertyStatus: Sendable, Hashable {
    case notYetLoaded
    case loading
    case loaded
    case failed(MediaError)
    case cancelled
}

/// Media at a local path or a URL that libavformat opens (file, http, https, HLS), with
/// properties that load asynchronously and on demand.
///
/// ```swift
/// let asset = Asset(url: URL(filePath: "/media/loop.mp4"))
/// let (duration, tracks) = try await asset.load(.duration, .tracks)
/// ```
///
/// Loading opens the media once, on a background thread (never the caller's), and every
/// property comes from that one open. A failed load fails every property requested with the
/// same ``MediaError``; ``cancelLoading()`` (or cancelling the awaiting task) ends the loads in
/// progress at once with reason `.cancelled`, and a later load starts again.
public final class Asset: Sendable, CustomStringConvertible {
    /// Timeouts for opening and reading the media.
    public struct Options: Sendable, Hashable {
        /// The longest time opening and probing may take (network connect, first bytes).
        public var openTimeout: Duration
        /// The longest time one read may block.
        public var readTimeout: Duration
        public init(openTimeout: Duration = .seconds(15), readTimeout: Duration = .seconds(15)) {
            self.openTimeout = openTimeout
            self.readTimeout = readTimeout
        }
    }

    /// The URL the asset was created with.
    public let url: URL
    /// What FFmpeg opens: the file path for file URLs, the URL text otherwise.
    public let source: String
    public let options: Options

    private struct State {
        var statuses: [String: AssetPropertyStatus] = [:]
        var job: LoadJob?
        var result: Result<AssetDescription, MediaError>?
    }
    private let state = LockedValue(State())

    /// An asset for `url`. Nothing is read until a property is loaded.
    public convenience init(url: URL, options: Options = Options()) {
        self.init(url: url, source: url.isFileURL ? url.path(percentEncoded: false) : url.absoluteString, options: options)
    }

    private init(url: URL, source: String, options: Options) {
        self.url = url
        self.source = source
        self.options = options
    }

    /// An asset for a command-line argument: a URL when it has a scheme (`https://…`), else a file path.
    public convenience init(pathOrURL: String, options: Options = Options()) {
        if pathOrURL.contains("://"), let url = URL(string: pathOrURL) {
            self.init(url: url, options: options)
        } else {
            // Error messages name the path as the user wrote it.
            self.init(url: URL(filePath: pathOrURL), source: pathOrURL, options: options)
        }
    }

    public var description: String { "Asset(\(source))" }

    /// Where the loading of `property` stands. Safe from any thread.
    public func status<Value>(of property: AssetProperty<Value>) -> AssetPropertyStatus {
        state.withLock { $0.statuses[property.name] ?? .notYetLoaded }
    }

    /// Loads the properties (opening the media if no earlier load did) and returns their values.
    ///
    /// - Throws: ``MediaError`` naming the source and the cause; reason `.cancelled` when the
    ///   load was cancelled by ``cancelLoading()`` or by cancelling the calling task.
    public func load<each Value>(_ properties: repeat AssetProperty<each Value>) async throws(MediaError) -> (repeat each Value) {
        var names: [String] = []
        for property in repeat each properties { names.append(property.name) }
        let description = try await loadDescription(names)
        return (repeat (each properties).extract(description))
    }

    /// Ends every load in progress: their properties become `.cancelled` and the waiting calls
    /// throw a `.cancelled` ``MediaError``. A blocking network read is interrupted too.
    public func cancelLoading() {
        let job = state.withLock { state -> LoadJob? in
            guard let job = state.job else { return nil }
            state.job = nil
            for (name, status) in state.statuses where status == .loading { state.statuses[name] = .cancelled }
            return job
        }
        job?.cancel(MediaError(source: source, operation: "loading", reason: .cancelled))
    }

    /// The description, loaded once; marks `names` loading, then loaded or failed.
    func loadDescription(_ names: [String]) async throws(MediaError) -> AssetDescription {
        let job: LoadJob? = state.withLock { state in
            if let result = state.result {
                for name in names {
                    switch result {
                    case .success: state.statuses[name] = .loaded
                    case .failure(let error): state.statuses[name] = .failed(error)
                    }
                }
                return nil
            }
            for name in names { state.statuses[name] = .loading }
            if let job = state.job { return job }
            let job = LoadJob()
            state.job = job
            job.start(source: source, options: options) { [weak self] result in self?.finish(job, result) }
            return job
        }
        let result: Result<AssetDescription, MediaError>
        if let job {
            result = await withTaskCancellationHandler {
                await job.wait()
            } onCancel: {
                self.cancelLoading()
            }
        } else {
            result = state.withLock { $0.result! }
        }
        // Properties asked for while another load ran are marked by `finish`; mark ours too.
        state.withLock { state in
            for name in names where state.statuses[name] == .loading || state.statuses[name] == .notYetLoaded {
                switch result {
                case .success: state.statuses[name] = .loaded
                case .failure(let error): state.statuses[name] = error.reason == .cancelled ? .cancelled : .failed(error)
                }
            }
        }
        return try result.get()
    }

    private func finish(_ job: LoadJob, _ result: Result<AssetDescription, MediaError>) {
        state.withLock { state in
            guard state.job === job else { return }  // cancelled meanwhile
            state.job = nil
            if case .failure(let error) = result, error.reason == .cancelled {
                for (name, status) in state.statuses where status == .loading { state.statuses[name] = .cancelled }
                return
            }
            state.result = result
            for (name, status) in state.statuses where status == .loading {
                switch result {
                case .success: state.statuses[name] = .loaded
                case .failure(let error): state.statuses[name] = .failed(error)
                }
            }
        }
    }
}

/// One open of an asset's media on a background thread, awaited by any number of loads.
final class LoadJob: Sendable {
    private enum Phase {
        case running([CheckedContinuation<Result<AssetDescription, MediaError>, Never>])
        case finished(Result<AssetDescription, MediaError>)
    }
    private let phase = LockedValue(Phase.running([]))
    let interruption = IOInterruption()

    /// Opens the media on a Dispatch worker: the open blocks in FFmpeg (network connect,
    /// probing), which must not occupy a thread of Swift's cooperative pool. At the default
    /// quality of service: Dispatch runs a user-initiated worker 2 nice steps above the render
    /// thread where it may (a schedule loaded while a show plays opens every item's media).
    func start(source: String, options: Asset.Options, then: @escaping @Sendable (Result<AssetDescription, MediaError>) -> Void) {
        let interruption = interruption
        DispatchQueue.global().async {
            let result: Result<AssetDescription, MediaError>
            do throws(MediaError) {
                let demuxer = try Demuxer(
                    source: source, openTimeout: options.openTimeout, readTimeout: options.readTimeout,
                    interruption: interruption)
                result = .success(AssetDescription(demuxer: demuxer))
            } catch {
                result = .failure(error)
            }
            then(result)
            self.complete(result)
        }
    }

    /// Waits for the result (returns at once when it is known).
    func wait() async -> Result<AssetDescription, MediaError> {
        await withCheckedContinuation { continuation in
            let known: Result<AssetDescription, MediaError>? = phase.withLock { phase in
                switch phase {
                case .finished(let result): return result
                case .running(var waiters):
                    waiters.append(continuation)
                    phase = .running(waiters)
                    return nil
                }
            }
            if let known { continuation.resume(returning: known) }
        }
    }

    /// Ends the job now with `error`; the blocking FFmpeg call is interrupted and its result ignored.
    func cancel(_ error: MediaError) {
        interruption.cancel()
        complete(.failure(error))
    }

    private func complete(_ result: Result<AssetDescription, MediaError>) {
        let waiters = phase.withLock { phase -> [CheckedContinuation<Result<AssetDescription, MediaError>, Never>] in
            guard case .running(let waiters) = phase else { return [] }
            phase = .finished(result)
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }
}
