import Foundation
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

@Suite("Concurrency stress")
struct StressTests {
    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }

    @Test("10,000 random operations from several tasks end without crash, deadlock or leaked thread")
    func randomOperations() async {
        let baseline = Self.threadCount()
        let harness = Harness(refreshRate: 60, audio: true)
        let names = ["queue1.mp4", "queue2.mp4", "queue3.mp4", "h264_aac.mp4"].map { Fixtures.path($0) }
        let player = harness.queue(names.map { PlayerItem(url: $0) })
        let video = harness.video
        let refresher = Task.detached {
            for _ in 0..<400 { video.step() }
        }
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var generator = SystemRandomNumberGenerator()
                    for step in 0..<2_500 {
                        let items = player.items()
                        switch Int.random(in: 0..<9, using: &generator) {
                        case 0: player.play()
                        case 1: player.pause()
                        case 2: player.rate = [0.5, 1, 2][step % 3]
                        case 3: player.seek(to: MediaTime(value: Int64.random(in: 0..<3000, using: &generator), timescale: 1000), completionHandler: nil)
                        case 4: player.seek(to: MediaTime(value: Int64(step % 9), timescale: 4), toleranceBefore: .zero, toleranceAfter: .zero, completionHandler: nil)
                        case 5:
                            if items.count < 6 { player.insert(PlayerItem(url: names[(worker + step) % names.count]), after: items.randomElement()) }
                        case 6: if let item = items.randomElement() { player.remove(item) }
                        case 7: _ = player.currentTime()
                        default:
                            let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 10), queue: nil) { _ in }
                            player.removeTimeObserver(token)
                        }
                    }
                }
            }
        }
        await refresher.value
        player.invalidate()
        // Item teardown is joined by invalidate(); only dispatch's pooled workers may linger.
        settle({ Self.threadCount() <= baseline + 8 }, timeout: 5)
        #expect(Self.threadCount() <= baseline + 8)
    }
}
