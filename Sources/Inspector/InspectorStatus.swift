/// `GET /api/status`: what the screen is doing. A stable interface: fields are only added.
public struct InspectorStatus: Codable, Sendable, Hashable {
    public var version: String
    public var uptimeSeconds: Double
    /// The configuration file, when the player runs with one.
    public var configFile: String?
    /// The schedule playing, and the SHA-256 of its contents.
    public var scheduleFile: String?
    public var scheduleSHA256: String?
    /// The winning entry (or `fallback`), the playlist item and its media, and where in it.
    public var entry: String?
    public var item: Int?
    public var media: String?
    public var positionSeconds: Double?
    /// The player's `timeControlStatus`, as AVPlayer names it: `playing`, `paused` or
    /// `waitingToPlayAtSpecifiedRate`; with the last, `waitingReason` says why (`noItemToPlay`,
    /// `toMinimizeStalls`: opening or starved, `itemFailed`: a failed item is held).
    public var state: String?
    public var waitingReason: String?
    /// When the programme next changes (ISO 8601, UTC), if within its horizon.
    public var nextChange: String?
    /// The display (`KMS /dev/dri/card0 HDMI-A-1 1920x1080@60`, `headless 1920x1080@60`).
    public var display: String
    /// The ALSA device, or `nil` without sound.
    public var audioDevice: String?
    /// Underruns of the ALSA device recovered since the player started (the device ran dry: a gap
    /// in the sound); `nil` without sound.
    public var audioUnderruns: Int?
    public var droppedFrames: Int
    /// Items that stalled, failed, were retried; pipeline rebuilds; starts of the player and
    /// runs that ended without an orderly stop (from the state file).
    public var stalls: Int
    public var itemFailures: Int
    public var retries: Int
    public var pipelineRebuilds: Int
    public var starts: Int
    public var uncleanEnds: Int
    /// The last error lines of the log, newest last.
    public var lastErrors: [String]
    /// Whether the systemd journal could be read when last tried (`/api/logs?source=journal`;
    /// checked at most once a minute, off the request), and why not. `nil` before the first try.
    public var journalReadable: Bool?
    public var journalProblem: String?

    public init(version: String, uptimeSeconds: Double, display: String) {
        self.version = version
        self.uptimeSeconds = uptimeSeconds
        self.display = display
        droppedFrames = 0
        stalls = 0
        itemFailures = 0
        retries = 0
        pipelineRebuilds = 0
        starts = 0
        uncleanEnds = 0
        lastErrors = []
    }
}

extension InspectorStatus {
    /// Writes every field, `null` where there is no value (no sound device, no next change…), as
    /// docs/inspector.md shows it: a client finds the same keys in every answer. A new field goes
    /// here too; InspectorTests checks every field of that document's table is in the answer.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(uptimeSeconds, forKey: .uptimeSeconds)
        try container.encode(configFile, forKey: .configFile)
        try container.encode(scheduleFile, forKey: .scheduleFile)
        try container.encode(scheduleSHA256, forKey: .scheduleSHA256)
        try container.encode(entry, forKey: .entry)
        try container.encode(item, forKey: .item)
        try container.encode(media, forKey: .media)
        try container.encode(positionSeconds, forKey: .positionSeconds)
        try container.encode(state, forKey: .state)
        try container.encode(waitingReason, forKey: .waitingReason)
        try container.encode(nextChange, forKey: .nextChange)
        try container.encode(display, forKey: .display)
        try container.encode(audioDevice, forKey: .audioDevice)
        try container.encode(audioUnderruns, forKey: .audioUnderruns)
        try container.encode(droppedFrames, forKey: .droppedFrames)
        try container.encode(stalls, forKey: .stalls)
        try container.encode(itemFailures, forKey: .itemFailures)
        try container.encode(retries, forKey: .retries)
        try container.encode(pipelineRebuilds, forKey: .pipelineRebuilds)
        try container.encode(starts, forKey: .starts)
        try container.encode(uncleanEnds, forKey: .uncleanEnds)
        try container.encode(lastErrors, forKey: .lastErrors)
        try container.encode(journalReadable, forKey: .journalReadable)
        try container.encode(journalProblem, forKey: .journalProblem)
    }
}

/// What the inspector reads from the running player; the command line fills it in.
public struct InspectorSources: Sendable {
    public var status: @Sendable () async -> InspectorStatus
    /// The last presented frame as PNG bytes, exactly as scanned out.
    public var screenshot: @Sendable () async throws -> [UInt8]
    /// `vitrine programme --json` for the schedule playing, between two ISO 8601 times; a
    /// message when it cannot be made.
    public var programme: @Sendable (_ from: String, _ to: String) async -> Result<String, InspectorError>
    public var logs: LogRing
    /// The player's lines in the systemd journal (`/api/logs?source=journal`); `nil`: not read.
    public var journal: JournalLogs?
    /// The Prometheus text exposition (`GET /metrics`).
    public var metrics: @Sendable () -> [UInt8]
    /// Proof of play between two ISO 8601 times (either may be open), as CSV or JSON: the content
    /// type and the bytes, or why not.
    public var proofOfPlay: @Sendable (_ from: String?, _ to: String?, _ csv: Bool) async -> Result<(String, [UInt8]), InspectorError>

    public init(status: @escaping @Sendable () async -> InspectorStatus, screenshot: @escaping @Sendable () async throws -> [UInt8],
                programme: @escaping @Sendable (String, String) async -> Result<String, InspectorError>, logs: LogRing,
                metrics: @escaping @Sendable () -> [UInt8],
                proofOfPlay: @escaping @Sendable (String?, String?, Bool) async -> Result<(String, [UInt8]), InspectorError>,
                journal: JournalLogs? = nil) {
        self.proofOfPlay = proofOfPlay
        self.journal = journal
        self.status = status
        self.screenshot = screenshot
        self.programme = programme
        self.logs = logs
        self.metrics = metrics
    }
}
