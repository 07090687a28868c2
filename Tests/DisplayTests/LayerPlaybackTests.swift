import Displays
import Foundation
import MediaAsset
import MediaSinks
import MediaTime
import Playback
import Testing

/// Several players on one screen, each in its own layer: real decoding, the real headless display,
/// a manual clock moved one refresh at a time.
@Suite("Players in layers", .enabled(if: MediaFixtures.available, "needs the generated fixtures, ffmpeg and ffprobe"))
struct LayerPlaybackTests {
    @Test("two players in two layers each present every frame of their clip once, in order, while the other plays")
    func twoPlayersEveryFrame() throws {
        let harness = try LayerHarness(mode: DisplayMode(width: 320, height: 120, refreshMillihertz: 50_000))
        let left = harness.player("queue1.mp4"), right = harness.player("mpeg2.ts")
        defer {
            left.invalidate()
            right.invalidate()
        }
        let leftLayer = PlayerLayer(player: left, name: "left"), rightLayer = PlayerLayer(player: right, name: "right")
        leftLayer.frame = .relative(x: 0, y: 0, width: 0.5, height: 1)
        rightLayer.frame = .relative(x: 0.5, y: 0, width: 0.5, height: 1)
        #expect(leftLayer.player === left && rightLayer.player === right)
        harness.display.layers.add(leftLayer)
        harness.display.layers.add(rightLayer)
        let leftLog = RecordList.recording(left), rightLog = RecordList.recording(right)
        left.play()
        right.play()
        #expect(try harness.run(until: { left.rate == 0 && right.rate == 0 }, maxRefreshes: 1_000))

        for (log, clip, layer) in [(leftLog, "queue1.mp4", "left"), (rightLog, "mpeg2.ts", "right")] {
            let frames = log.frames
            #expect(MediaFixtures.fromFirst(frames) == MediaFixtures.framePTS(clip), "\(clip): every frame once, in order")
            #expect(frames.allSatisfy { $0.layer == layer && $0.itemIndex == 0 })
            #expect(frames.last?.droppedFrames == 0)
            // 25 fps on a 50 Hz screen: every other refresh, no frame late or early.
            let refreshes = frames.map(\.refresh)
            #expect(zip(refreshes, refreshes.dropFirst()).allSatisfy { $1 == $0 + 2 }, "\(clip): \(refreshes)")
        }
        // They played at the same time: every one of the shorter clip's frames came at a refresh
        // that also presented one of the longer clip's.
        let rightRefreshes = Set(rightLog.frames.map(\.refresh))
        #expect(leftLog.frames.allSatisfy { rightRefreshes.contains($0.refresh) })
        // The presentation log's frame lines name the layer.
        let line = PresentationLogWriter.line(for: .frame(try #require(leftLog.frames.first)))
        #expect(line.hasSuffix(",\"layer\":\"left\"}"), "\(line)")
    }

    @Test("a display used as a video sink is its own full-screen layer, named screen in the log")
    func displayAsSinkIsRootLayer() throws {
        let harness = try LayerHarness(mode: DisplayMode(width: 160, height: 120, refreshMillihertz: 25_000))
        let player = Player(item: MediaFixtures.item("queue1.mp4"), videoSink: harness.display, clock: harness.clock)
        defer { player.invalidate() }
        let root = harness.display.layers.rootLayer
        #expect(root.name == "screen" && root.player === player && harness.display.videoLayer === root)
        let log = RecordList.recording(player)
        #expect(try harness.run(until: { root.isReadyForDisplay }, maxRefreshes: 100))
        #expect(log.frames.first?.layer == "screen")
        // 320x240 fit into 160x120: the whole screen.
        #expect(root.videoRect == ScreenRect(x: 0, y: 0, width: 160, height: 120))
        player.invalidate()
        #expect(!root.isReadyForDisplay && root.player == nil)
    }

    @Test("isReadyForDisplay: true from the first presented frame of the current item, false while a new item waits, in another layer, or without a player")
    func readiness() async throws {
        let harness = try LayerHarness(mode: DisplayMode(width: 160, height: 60, refreshMillihertz: 25_000))
        let player = harness.player("queue1.mp4")
        defer { player.invalidate() }
        let first = PlayerLayer(player: player, name: "first")
        first.frame = .relative(x: 0, y: 0, width: 0.5, height: 1)
        first.videoGravity = .resize
        let second = PlayerLayer(name: "second")
        second.frame = .relative(x: 0.5, y: 0, width: 0.5, height: 1)
        second.videoGravity = .resize
        harness.display.layers.add(first)
        harness.display.layers.add(second)
        // Subscribed now: the stream keeps every change until it is read at the end. (A task reading
        // it meanwhile may get no thread while this test and its neighbours block theirs.)
        let updates = first.readyForDisplayUpdates
        #expect(!first.isReadyForDisplay)

        // Paused: the first frame is shown anyway, and the layer is ready from that refresh.
        #expect(first.videoRect == .zero)
        try harness.step()
        #expect(first.isReadyForDisplay)
        #expect(first.videoRect == ScreenRect(x: 0, y: 0, width: 80, height: 60))

        // A new item: not ready at once, ready again when its first frame is presented.
        player.replaceCurrentItem(with: MediaFixtures.item("queue2.mp4"))
        #expect(!first.isReadyForDisplay)
        #expect(try harness.run(until: { first.isReadyForDisplay }, maxRefreshes: 50))

        // The player moves to the second layer: the first is no longer ready (and keeps its last
        // picture); the second shows the player's current picture at the next refresh, paused as it is.
        second.player = player
        #expect(first.player == nil && second.player === player)
        #expect(!first.isReadyForDisplay && !second.isReadyForDisplay)
        try harness.step()
        #expect(second.isReadyForDisplay)
        #expect(second.videoRect == ScreenRect(x: 80, y: 0, width: 80, height: 60))
        let shot = try harness.display.screenshot().image
        let sameness = psnr(shot.rgbBytes(x: 0, y: 0, width: 80, height: 60), shot.rgbBytes(x: 80, y: 0, width: 80, height: 60))
        #expect(sameness > 40, "both halves show the same picture of queue2: \(sameness) dB")

        second.player = nil
        #expect(!second.isReadyForDisplay && second.player == nil)
        #expect(await firstValues(5, of: updates) == [false, true, false, true, false])
    }

    @Test("Player(url:) has no output until a layer shows it; then it becomes ready to play and its picture is seen")
    func playerWithoutOutputThenLayer() throws {
        let harness = try LayerHarness(mode: DisplayMode(width: 160, height: 120, refreshMillihertz: 25_000))
        let player = Player(url: MediaFixtures.path("queue3.mp4"))
        defer { player.invalidate() }
        let item = try #require(player.currentItem)
        let ready = Values<PlayerItem.Status>()
        let updates = item.statusUpdates
        let watcher = Task { for await status in updates { ready.append(status) } }
        defer { watcher.cancel() }
        #expect(ready.wait { $0.contains(.readyToPlay) } || item.status == .readyToPlay)
        #expect(player.status == .unknown, "no output yet")
        let layer = PlayerLayer(player: player)
        #expect(layer.name.hasPrefix("layer-"))
        #expect(player.status == .readyToPlay)
        harness.display.layers.add(layer)
        // Player(url:) runs on the monotonic clock: refreshes on the manual clock only show its first frame.
        #expect(try harness.run(until: { layer.isReadyForDisplay }, maxRefreshes: 100))
        #expect(Player(playerItem: nil).currentItem == nil)
    }

    @Test("three zones built by hand match, zone by zone, FFmpeg's frames scaled into their rectangles (PSNR >= 30 dB)")
    func threeZonesMatchFFmpeg() throws {
        let harness = try LayerHarness(mode: DisplayMode(width: 640, height: 360, refreshMillihertz: 25_000))
        // A main zone (fit: letterboxed), a top-right zone (fill: cropped), a bottom-right zone (stretch).
        let zones: [(name: String, clip: String, frame: LayerFrame, gravity: VideoGravity)] = [
            ("main", "h264_aac.mp4", .relative(x: 0, y: 0, width: 0.5, height: 1), .resizeAspect),
            ("top", "queue2.mp4", .relative(x: 0.5, y: 0, width: 0.5, height: 0.5), .resizeAspectFill),
            ("bottom", "mpeg2.ts", .relative(x: 0.5, y: 0.5, width: 0.5, height: 0.5), .resize),
        ]
        var players: [Player] = [], logs: [RecordList] = [], layers: [PlayerLayer] = []
        defer { players.forEach { $0.invalidate() } }
        for zone in zones {
            let player = harness.player(zone.clip)
            let layer = PlayerLayer(player: player, name: zone.name)
            layer.frame = zone.frame
            layer.videoGravity = zone.gravity
            harness.display.layers.add(layer)
            players.append(player)
            logs.append(RecordList.recording(player))
            layers.append(layer)
        }
        players.forEach { $0.play() }
        // 25 fps on 25 Hz: 30 refreshes show frame 29 of each clip.
        for _ in 0..<30 { try harness.step() }
        let shot = try harness.display.screenshot().image

        for (index, zone) in zones.enumerated() {
            // Every frame so far was presented once: the last one is the clip's frame number count - 1.
            let frames = logs[index].frames
            #expect(MediaFixtures.fromFirst(frames) == Array(MediaFixtures.framePTS(zone.clip).prefix(frames.count)))
            #expect(frames.allSatisfy { $0.layer == zone.name })
            let frameNumber = frames.count - 1
            #expect(frameNumber == 29, "\(zone.name) shows frame \(frameNumber)")
            let rect = layers[index].videoRect
            let bounds = zone.frame.resolve(canvasWidth: 640, canvasHeight: 360)
            let width = Int(rect.width.rounded()), height = Int(rect.height.rounded())
            // The part of the picture inside the zone, in the scaled picture's pixels and on screen.
            let visible = try #require(rect.intersection(bounds))
            let crop = (x: Int((visible.x - rect.x).rounded()), y: Int((visible.y - rect.y).rounded()),
                        width: Int(visible.width.rounded()), height: Int(visible.height.rounded()))
            let reference = MediaFixtures.frameRGB(zone.clip, index: frameNumber, width: width, height: height, crop: crop)
            try #require(reference.count == crop.width * crop.height * 3, "ffmpeg's frame of \(zone.clip)")
            let rendered = shot.rgbBytes(x: Int(visible.x.rounded()), y: Int(visible.y.rounded()), width: crop.width, height: crop.height)
            let score = psnr(rendered, reference)
            #expect(score >= 30, "\(zone.name): \(score) dB against ffmpeg's frame \(frameNumber) in \(rect)")
            // Another frame of the same clip matches worse: the zone shows the frame the log says.
            let other = MediaFixtures.frameRGB(zone.clip, index: frameNumber - 10, width: width, height: height, crop: crop)
            #expect(psnr(rendered, other) < score - 3, "\(zone.name): frame \(frameNumber - 10) must match worse")
        }
        // The main zone letterboxes (320x240 in 320x360): its bars are black.
        #expect(layers[0].videoRect == ScreenRect(x: 0, y: 60, width: 320, height: 240))
        #expect(shot.rgb(160, 20) == .black && shot.rgb(160, 340) == .black)
    }

    @Test("a zone's seams stay gapless while another zone plays on (two queue players in two layers)")
    func seamWhileOtherZonePlays() throws {
        let harness = try LayerHarness(mode: DisplayMode(width: 320, height: 120, refreshMillihertz: 25_000))
        let clips = ["queue1.mp4", "queue2.mp4", "queue3.mp4"]
        let main = QueuePlayer(items: clips.map(MediaFixtures.item), clock: harness.clock)
        let side = QueuePlayer(items: [MediaFixtures.item("h264_aac.mp4")], clock: harness.clock)
        defer {
            main.invalidate()
            side.invalidate()
        }
        let mainLayer = PlayerLayer(player: main, name: "main")
        mainLayer.frame = .relative(x: 0, y: 0, width: 0.5, height: 1)
        let sideLayer = PlayerLayer(player: side, name: "side")
        sideLayer.frame = .relative(x: 0.5, y: 0, width: 0.5, height: 1)
        harness.display.layers.add(mainLayer)
        harness.display.layers.add(sideLayer)
        let mainLog = RecordList.recording(main), sideLog = RecordList.recording(side)
        main.play()
        side.play()
        #expect(try harness.run(until: { main.items().isEmpty }, maxRefreshes: 1_000))

        // Every frame of the three clips once, in order, each on the refresh after the one before:
        // the seams included, where the next clip's first frame follows the last one's at once.
        let references = clips.map(MediaFixtures.framePTS)
        let frames = mainLog.frames
        #expect(frames.map(\.presentationTime) == references.flatMap { $0 }, "the MP4 clips start at 0")
        #expect(frames.map(\.itemIndex) == references.enumerated().flatMap { index, pts in Array(repeating: index, count: pts.count) })
        let refreshes = frames.map(\.refresh)
        #expect(zip(refreshes, refreshes.dropFirst()).allSatisfy { $1 == $0 + 1 }, "\(refreshes)")
        #expect(mainLog.events(.itemReady).count == 3)
        // Meanwhile the side zone presented a new frame at every one of those refreshes, without a drop.
        let sideFrames = sideLog.frames.filter { $0.refresh >= refreshes.first! && $0.refresh <= refreshes.last! }
        #expect(sideFrames.map(\.refresh) == Array(refreshes.first!...refreshes.last!))
        #expect(sideFrames.allSatisfy { $0.itemIndex == 0 && $0.droppedFrames == 0 && $0.layer == "side" })
    }
}
