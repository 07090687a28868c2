import MediaTime
import Playback
import Prometheus
import Threading

/// The player's Prometheus metrics (`GET /metrics`, docs/inspector.md): swift-prometheus's
/// collectors (which are swift-metrics handlers), fed from the presentation log's records as they
/// happen, each with its help text. It also keeps the event counts the inspector's status shows.
final class PlaybackMetrics: Sendable {
    /// Events counted since the player started (`/api/status`).
    struct Counts: Sendable {
        var stalls = 0
        var itemFailures = 0
        var retries = 0
        var pipelineRebuilds = 0
    }

    /// What `record` needs from one record to the next: the last frame's presentation time and
    /// dropped total (for the interval and the newly dropped), and the event counts. Taken once
    /// per record, on the render thread; read by the inspector's status.
    private struct Progress {
        var presented: MediaTime?
        var dropped = 0
        var counts = Counts()
    }

    let registry: PrometheusCollectorRegistry
    private let framesPresented: Counter
    private let framesDropped: Counter
    private let stalls: Counter
    private let itemFailures: Counter
    private let retries: Counter
    private let pipelineRebuilds: Counter
    private let itemsStarted: Counter
    private let frameInterval: ValueHistogram
    private let avOffset: ValueHistogram
    private let decodeTime: ValueHistogram
    private let uptime: Gauge
    private let progress = LockedValue(Progress())
    private let started = ContinuousClock.now

    /// Makes the collectors, and the build-info and restart figures.
    init(version: String, starts: Int, uncleanEnds: Int) {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        func counter(_ name: String, _ help: String) -> Counter {
            registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "vitrine", metricName: name, unitName: "total", helpText: help))
        }
        func gauge(_ name: String, _ unit: String, _ help: String, labels: [(String, String)] = []) -> Gauge {
            registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "vitrine", metricName: name, unitName: unit, helpText: help), labels: labels)
        }
        framesPresented = counter("frames_presented", "Frames that became visible on the display.")
        framesDropped = counter("frames_dropped", "Frames decoded but never presented (late).")
        stalls = counter("stalls", "Times playback ran out of frames (the engine's stalled and the supervisor's stall).")
        itemFailures = counter("item_failures", "Items that could not be opened or decoded, or stopped before their end.")
        retries = counter("item_retries", "Retries of failed or stalled items by the supervisor.")
        pipelineRebuilds = counter("pipeline_rebuilds", "Times the playback engine was rebuilt inside the process.")
        itemsStarted = counter("items_started", "Items whose first frame was presented.")
        frameInterval = registry.makeValueHistogram(
            descriptor: MetricNameDescriptor(namespace: "vitrine", metricName: "frame_interval", unitName: "seconds",
                                             helpText: "Time between two presented frames."),
            buckets: [0.004, 0.008, 0.0125, 0.0167, 0.02, 0.025, 0.0334, 0.04, 0.05, 0.1, 0.25, 1])
        avOffset = registry.makeValueHistogram(
            descriptor: MetricNameDescriptor(namespace: "vitrine", metricName: "av_offset", unitName: "seconds",
                                             helpText: "Audio clock minus the presented frame's time, when audio is the master clock."),
            buckets: [-0.1, -0.05, -0.02, -0.01, -0.005, 0, 0.005, 0.01, 0.02, 0.05, 0.1])
        decodeTime = registry.makeValueHistogram(
            descriptor: MetricNameDescriptor(namespace: "vitrine", metricName: "video_decode", unitName: "seconds",
                                             helpText: "Decoder time per video frame (its packets sent, the frame received and converted)."),
            buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.0334, 0.05, 0.1, 0.25])
        uptime = gauge("uptime", "seconds", "How long this run of the player has lasted.")
        gauge("build", "info", "The player's version (the value is always 1).", labels: [("version", version)]).set(to: 1)
        gauge("starts", "", "Runs of the player, from the state file.").set(Int64(starts))
        gauge("unclean_ends", "", "Runs that ended without an orderly stop (crash, kill, power cut), from the state file.").set(Int64(uncleanEnds))
    }

    /// Takes one frame's decode time (on a decode thread).
    func recordDecode(_ time: MediaTime) { decodeTime.record(time.seconds) }

    /// Takes one presentation record (on the render thread: counts and hands on, nothing more).
    func record(_ record: PresentationRecord) {
        switch record {
        case .frame(let frame):
            framesPresented.increment()
            let (interval, newlyDropped): (MediaTime?, Int) = progress.withLock { progress in
                defer {
                    progress.presented = frame.presentedAt
                    progress.dropped = frame.droppedFrames
                }
                return (progress.presented.map { frame.presentedAt - $0 }, max(0, frame.droppedFrames - progress.dropped))
            }
            if let interval { frameInterval.record(interval.seconds) }
            if newlyDropped > 0 { framesDropped.increment(by: Int64(newlyDropped)) }
            if let audio = frame.audioClock { avOffset.record((audio - frame.presentationTime).seconds) }
        case .event(let event):
            switch event.kind {
            case .stalled, .stall:
                stalls.increment()
                progress.withLock { $0.counts.stalls += 1 }
            case .itemFailed, .showItemFailed:
                itemFailures.increment()
                progress.withLock { $0.counts.itemFailures += 1 }
            case .retry:
                retries.increment()
                progress.withLock { $0.counts.retries += 1 }
            case .pipelineRebuilt:
                pipelineRebuilds.increment()
                progress.withLock { $0.counts.pipelineRebuilds += 1 }
            case .itemReady: itemsStarted.increment()
            default: break
            }
        }
    }

    /// The events counted so far.
    var counts: Counts { progress.withLock { $0.counts } }

    /// The Prometheus text exposition.
    func exposition() -> [UInt8] {
        uptime.set((ContinuousClock.now - started).seconds)
        return registry.emitToBuffer()
    }
}
