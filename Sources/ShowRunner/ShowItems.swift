import Displays
import MediaAsset
import MediaSinks
import MediaTime
import Playback
import Scheduling

/// Turns a schedule's items into the engine's items and the show's plans.
enum ShowItems {
    /// The engine item for one play of `item`, starting `position` after its in point; `withSound`
    /// false when the show has no audio output.
    /// A trimmed item ends at its out point in the engine, as gaplessly as at the media's end.
    static func playerItem(for item: MediaItem, withSound: Bool, from position: MediaTime = .zero) -> PlayerItem {
        let playerItem = PlayerItem(url: item.source.location)
        defer {
            // Started part-way (the programme is mid-item): a still shows for what is left, a video
            // starts at the exact frame.
            let millisecond = MediaTime(value: 1, timescale: 1000)
            if item.source.isStill {
                if position > millisecond, let length = item.playDuration { playerItem.stillImageDuration = length - position }
            } else if (item.inPoint ?? .zero) + position > millisecond {
                playerItem.seek(to: (item.inPoint ?? .zero) + position, toleranceBefore: .zero, toleranceAfter: .zero)
            }
        }
        if item.source.isStill {
            playerItem.stillImageDuration = item.duration ?? MediaTime(value: 10, timescale: 1)
        } else if item.outPoint != nil || item.duration != nil, let length = item.playDuration, length.isNumeric {
            // Only a real cut needs an out point: the media's own end ends the item anyway.
            playerItem.forwardPlaybackEndTime = (item.inPoint ?? .zero) + length
        }
        if item.isMuted || !withSound { playerItem.isAudioEnabled = false }
        return playerItem
    }

    /// What the show does while `item` plays: overlays placed in the media's timeline (cues count from
    /// the in point), gravity and volume. In a layout's `zone`, overlay rectangles are fractions of
    /// the zone.
    static func plan(for item: MediaItem, defaultGravity: VideoGravity, screenWidth: Int, screenHeight: Int,
                     zone: OverlayRect? = nil, log: (String) -> Void) -> ItemPlan {
        let inPoint = item.source.isStill ? MediaTime.zero : (item.inPoint ?? .zero)
        var plan = ItemPlan(gravity: item.gravity ?? defaultGravity)
        plan.isStill = item.source.isStill
        plan.volume = item.isMuted ? 0 : Float(min(max(item.volume, 0), 1))
        for (written, range) in item.overlayTimeline() {
            var overlay = written
            if let zone {
                let rect = written.rect
                overlay.rect = OverlayRect(x: zone.x + rect.x * zone.width, y: zone.y + rect.y * zone.height,
                                           width: rect.width * zone.width, height: rect.height * zone.height)
            }
            guard let screen = screenOverlay(overlay, screenHeight: screenHeight, log: log) else { continue }
            let end: MediaTime? = range.end.isNumeric ? inPoint + range.end : nil
            var cue = CueSpec(label: label(overlay), overlay: screen, start: inPoint + range.start, end: end)
            cue.ticker = ticker(overlay, screenWidth: screenWidth, screenHeight: screenHeight)
            plan.cues.append(cue)
        }
        return plan
    }

    static func label(_ overlay: Overlay) -> String {
        let what: String
        switch overlay.content {
        case .image(let path): what = path.split(separator: "/").last.map(String.init) ?? path
        case .text(let style): what = "text \"\(style.text.prefix(40))\""
        }
        return "\(what) at \(overlay.cue)"
    }

    /// The compositor's overlay for a schedule overlay; `nil` (logged) when its picture cannot be read.
    static func screenOverlay(_ overlay: Overlay, screenHeight: Int, log: (String) -> Void) -> OverlayLayer? {
        let frame = LayerFrame.relative(x: overlay.rect.x, y: overlay.rect.y, width: overlay.rect.width, height: overlay.rect.height)
        let content: OverlayLayer.Content
        switch overlay.content {
        case .image(let path):
            do { content = .image(try RGBAImage(contentsOf: path)) } catch {
                log("overlay image \(path) skipped: \(error)")
                return nil
            }
        case .text(let style):
            // The font size is a fraction of the rectangle's height.
            let pixels = max(8, Int((style.fontSize * overlay.rect.height * Double(screenHeight)).rounded()))
            content = .text(style.text, TextStyle(
                pixelSize: pixels, color: style.color, background: style.background,
                alignment: .center, padding: max(2, pixels / 6)))
        }
        return OverlayLayer(content, frame: frame, zIndex: overlay.zIndex, opacity: overlay.opacity,
                             fadeIn: overlay.fadeIn, fadeOut: overlay.fadeOut)
    }

    /// A scrolling text overlay's motion and looks; `nil` for anything else.
    static func ticker(_ overlay: Overlay, screenWidth: Int, screenHeight: Int) -> TickerSpec? {
        guard case .text(let style) = overlay.content, let speed = style.tickerSpeed, speed > 0 else { return nil }
        let x = Int((overlay.rect.x * Double(screenWidth)).rounded()), y = Int((overlay.rect.y * Double(screenHeight)).rounded())
        let width = Int((overlay.rect.width * Double(screenWidth)).rounded())
        let height = Int((overlay.rect.height * Double(screenHeight)).rounded())
        guard width > 0, height > 0 else { return nil }
        let pixels = max(8, Int((style.fontSize * Double(height)).rounded()))
        // DejaVu Sans advances stay under 0.8 em for every Latin letter: the line never wraps.
        let lineWidth = Int(Double(pixels) * 0.8 * Double(style.text.count)) + pixels
        // The bar: the background colour over the whole rectangle (transparent without one).
        let pixel: [UInt8] = style.background.map { [$0.red, $0.green, $0.blue, $0.alpha] } ?? [0, 0, 0, 0]
        let bar = RGBAImage(width: width, height: height, pixels: [UInt8]((0..<(width * height)).flatMap { _ in pixel }))
        let background = OverlayLayer(.image(bar), frame: .pixels(x: x, y: y, width: width, height: height), zIndex: overlay.zIndex,
                                       opacity: overlay.opacity, fadeIn: overlay.fadeIn, fadeOut: overlay.fadeOut)
        let text = TextStyle(pixelSize: pixels, color: style.color, background: nil, alignment: .leading, padding: 0)
        return TickerSpec(text: style.text, style: text, x: x, y: y, width: width, height: height, lineWidth: lineWidth,
                          speed: speed * Double(width), background: background, zIndex: overlay.zIndex, opacity: overlay.opacity)
    }
}
