internal import CFFmpeg
import MediaAsset
import MediaTime
import MediaSinks

/// A compressed packet with the seek serial it was read under.
struct QueuedPacket: Sendable {
    let packet: Packet
    let serial: Int
}

extension MediaTime {
    /// `ticks` of a stream's time base, as an exact rational time.
    init(ticks: Int64, timeBase: AVRational) {
        if timeBase.num == 1 || timeBase.num == 0 {
            self.init(value: ticks, timescale: timeBase.den)
        } else {
            self.init(value: ticks * Int64(timeBase.num), timescale: timeBase.den)
        }
    }
}

extension MediaError {
    /// An engine-side failure of `source` (read error mid-stream, removal while loading).
    static func playback(_ source: String, _ operation: String, _ reason: Reason, detail: String? = nil) -> MediaError {
        MediaError(source: source, operation: operation, reason: reason, detail: detail)
    }
}
