public import MediaTime
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The ambient volume's decisions, and nothing else: no device, no clock, no thread. Each
/// ``step(_:)`` is told the time, the room's level since the last step, since when the speaker has
/// been silent and the local time of day; it answers with the master volume. Tests drive it with a
/// clock they step; ``AmbientVolume`` drives it with the real devices.
///
/// **Measuring.** The microphone hears the screen as well as the room, so the room is measured only
/// in the player's own gaps: a window of captured sound counts only if the speaker had been silent
/// for ``Settings/settleTime`` before the window began (the room's echo of the last sound has died
/// away, and the output's and the capture's buffers have passed it) and still is. Between items,
/// still pictures, silent passages and a muted output are such gaps; a window in which anything
/// played is thrown away. Accepted windows feed an average of the room's power (mean square, so
/// bursts weigh as loud as they sound) with the time constant ``Settings/timeConstant``.
///
/// **Deciding.** The averaged level maps linearly onto the volume: ``Settings/levelRange``'s lower
/// end to ``Settings/volumeRange``'s lower end, its upper end to the upper end, clamped outside.
/// During ``Settings/quietHours`` the volume is at most their volume. The volume moves towards that
/// target at most ``Settings/maximumChangePerSecond`` (the first step sets it outright); while
/// nothing has been measured yet it goes to ``Settings/initialVolume`` (capped by the quiet hours). While the speaker plays without a gap,
/// the last measurement holds.
public struct AmbientVolumeController: Sendable {
    /// The configuration (`[audio.ambient]`, docs/configuration.md).
    public struct Settings: Sendable, Hashable {
        /// Room levels in dBFS (RMS at the microphone) for the two ends of ``volumeRange``.
        public var levelRange: ClosedRange<Float>
        /// The master volume (0…1) at a quiet room and at a loud one.
        public var volumeRange: ClosedRange<Float>
        /// How far the volume may move in a second (0…1 scale).
        public var maximumChangePerSecond: Float
        /// The room level's averaging time constant, in seconds: a change in the room shows 63 % of
        /// the way after this much measured time.
        public var timeConstant: Double
        /// When the volume is capped, in local time.
        public var quietHours: QuietHours?
        /// How long, in seconds, the speaker must have been silent before the room is measured.
        public var settleTime: Double
        /// The volume until the room has been measured.
        public var initialVolume: Float

        public init(levelRange: ClosedRange<Float>, volumeRange: ClosedRange<Float>, maximumChangePerSecond: Float = 0.05,
                    timeConstant: Double = 30, quietHours: QuietHours? = nil, settleTime: Double = 0.5, initialVolume: Float? = nil) {
            self.levelRange = levelRange
            self.volumeRange = volumeRange
            self.maximumChangePerSecond = maximumChangePerSecond
            self.timeConstant = timeConstant
            self.quietHours = quietHours
            self.settleTime = settleTime
            self.initialVolume = min(volumeRange.upperBound, max(volumeRange.lowerBound, initialVolume ?? volumeRange.upperBound))
        }
    }

    /// Hours of the day with a volume cap: from ``start`` until ``end`` (seconds after local
    /// midnight; across midnight when ``end`` is earlier than ``start``).
    public struct QuietHours: Sendable, Hashable {
        public var start: Int
        public var end: Int
        /// The highest volume during the quiet hours.
        public var volume: Float

        public init(start: Int, end: Int, volume: Float) {
            self.start = start
            self.end = end
            self.volume = volume
        }

        /// Whether `secondsIntoDay` (local) falls in them.
        public func contains(_ secondsIntoDay: Int) -> Bool {
            start <= end ? (start <= secondsIntoDay && secondsIntoDay < end) : (secondsIntoDay >= start || secondsIntoDay < end)
        }
    }

    /// What the controller is doing.
    public enum Phase: Sendable, Hashable, CustomStringConvertible {
        /// Nothing measured yet: the speaker has not been silent long enough.
        case waitingForGap
        /// The last window was measured.
        case measuring
        /// Measured before; the speaker sounds now, so the last measurement holds.
        case holding

        public var description: String {
            switch self {
            case .waitingForGap: "waiting for a gap"
            case .measuring: "measuring"
            case .holding: "holding"
            }
        }
    }

    /// What one step is told.
    public struct Observation: Sendable {
        /// The host time of the step.
        public var now: MediaTime
        /// The room's level captured since the previous step, if anything was captured.
        public var room: CapturedLevel?
        /// Since when the speaker has been silent (host time), or `nil` while it sounds.
        public var speakerSilentSince: MediaTime?
        /// Seconds since local midnight, for the quiet hours.
        public var localSecondsIntoDay: Int

        public init(now: MediaTime, room: CapturedLevel?, speakerSilentSince: MediaTime?, localSecondsIntoDay: Int) {
            self.now = now
            self.room = room
            self.speakerSilentSince = speakerSilentSince
            self.localSecondsIntoDay = localSecondsIntoDay
        }
    }

    public let settings: Settings
    public private(set) var phase = Phase.waitingForGap
    /// The master volume decided last.
    public private(set) var volume: Float
    /// Where the volume is heading.
    public private(set) var target: Float
    /// Whether the last step was in the quiet hours.
    public private(set) var isQuiet = false
    private var meanSquare: Double?
    private var lastStep: MediaTime?

    /// A controller starting at `settings.initialVolume`.
    public init(settings: Settings) {
        self.settings = settings
        volume = settings.initialVolume
        target = settings.initialVolume
    }

    /// The room's averaged level in dBFS, or `nil` before the first measurement.
    public var roomLevel: Float? { meanSquare.map { LevelMeter.decibels(amplitude: Float($0.squareRoot())) } }

    /// Takes one observation; returns the new volume when it changed.
    public mutating func step(_ observation: Observation) -> Float? {
        if let room = observation.room, room.frameCount > 0 {
            if let silentSince = observation.speakerSilentSince,
               (silentSince + MediaTime(seconds: settings.settleTime, preferredTimescale: 1_000_000)) <= room.start {
                average(room)
                phase = .measuring
            } else if meanSquare != nil {
                phase = .holding
            }
        }
        isQuiet = settings.quietHours?.contains(observation.localSecondsIntoDay) ?? false
        target = decideTarget()

        // The first step sets the volume outright: a screen starting in the quiet hours starts quiet.
        let allowed = lastStep.map { settings.maximumChangePerSecond * Float(max(0, min(10, (observation.now - $0).seconds))) }
            ?? .infinity
        lastStep = observation.now
        let moved = volume + min(allowed, max(-allowed, target - volume))
        guard moved != volume else { return nil }
        volume = moved
        return moved
    }

    /// Adds a measured window to the average: exact for the first, exponential with the time constant after.
    private mutating func average(_ room: CapturedLevel) {
        guard let current = meanSquare else {
            meanSquare = room.meanSquare
            return
        }
        let measured = max(0, (room.end - room.start).seconds)
        let weight = settings.timeConstant > 0 ? 1 - exp(-measured / settings.timeConstant) : 1
        meanSquare = current + weight * (room.meanSquare - current)
    }

    private func decideTarget() -> Float {
        var target = settings.initialVolume
        if let level = roomLevel {
            let levels = settings.levelRange, volumes = settings.volumeRange
            let span = levels.upperBound - levels.lowerBound
            let position = span > 0 ? min(1, max(0, (level - levels.lowerBound) / span)) : (level >= levels.upperBound ? 1 : 0)
            target = volumes.lowerBound + position * (volumes.upperBound - volumes.lowerBound)
        }
        if isQuiet, let quiet = settings.quietHours { target = min(target, quiet.volume) }
        return target
    }
}
