import Foundation
import MediaTime
import Playback
import MediaSinks
@testable import Audio

/// Feeds a sink from its own thread, like the engine's audio thread: a tone of
/// `seconds` (or endlessly until stopped), with media times counting from zero.
final class Feeder: @unchecked Sendable {
    private let sink: any AudioSink
    private let lock = NSLock()
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(sink: any AudioSink, seconds: Double?, frequency: Double = 440, amplitude: Float = 0.3) {
        self.sink = sink
        let format = sink.format
        let thread = Thread { [self] in
            let framesPerBuffer = 960
            let chunk = sine(frequency: frequency, amplitude: amplitude, frames: format.sampleRate)
            var frame: Int64 = 0
            let total = seconds.map { Int64($0 * Double(format.sampleRate)) }
            while !isStopped, total.map({ frame < $0 }) ?? true {
                let offset = Int(frame % Int64(format.sampleRate))
                let count = min(framesPerBuffer, format.sampleRate - offset)
                let samples = Array(chunk[(offset * 2)..<((offset + count) * 2)])
                let buffer = AudioBuffer(
                    samples: samples, format: format,
                    presentationTime: MediaTime(value: frame, timescale: Int32(format.sampleRate)))
                guard sink.enqueue(buffer) else { break }
                frame += Int64(count)
            }
            done.signal()
        }
        thread.start()
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    func stop() {
        lock.withLock { stopped = true }
        sink.flush()
        done.wait()
    }
}
