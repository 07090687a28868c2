import Displays
import MediaAsset
import MediaTime
import Playback
import Synchronization

/// The engine's side of the sink, scripted: hands out queued content one refresh at a time and records
/// what the display reports back.
final class ScriptedSource: VideoFrameSource {
    private struct State {
        var queue: [VideoSinkContent] = []
        var nextID: UInt64 = 1
        var presented: [(UInt64, RefreshTick)] = []
        var skipped: [RefreshTick] = []
    }
    private let state = LockedValue(State())

    /// Queues a frame for the next refresh; returns its frame id.
    @discardableResult
    func enqueue(_ frame: VideoFrame?, subtitle: SubtitleContent? = nil) -> UInt64 {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.queue.append(VideoSinkContent(frameID: id, frame: frame, subtitle: subtitle))
            return id
        }
    }

    var presentedIDs: [UInt64] { state.withLock { $0.presented.map(\.0) } }
    var presentations: [(UInt64, RefreshTick)] { state.withLock { $0.presented } }
    var skippedCount: Int { state.withLock { $0.skipped.count } }

    func content(for tick: RefreshTick) -> VideoSinkContent? {
        state.withLock { state in state.queue.isEmpty ? nil : state.queue.removeFirst() }
    }

    func didPresent(frameID: UInt64, at tick: RefreshTick) {
        state.withLock { $0.presented.append((frameID, tick)) }
    }

    func didSkipRefresh(_ tick: RefreshTick) {
        state.withLock { $0.skipped.append(tick) }
    }
}

struct RGB: Equatable, CustomStringConvertible {
    var r: Int, g: Int, b: Int
    static let red = RGB(r: 255, g: 0, b: 0)
    static let green = RGB(r: 0, g: 255, b: 0)
    static let blue = RGB(r: 0, g: 0, b: 255)
    static let white = RGB(r: 255, g: 255, b: 255)
    static let black = RGB(r: 0, g: 0, b: 0)
    var description: String { "(\(r), \(g), \(b))" }

    func isClose(to other: RGB, tolerance: Int = 8) -> Bool {
        abs(r - other.r) <= tolerance && abs(g - other.g) <= tolerance && abs(b - other.b) <= tolerance
    }
}

extension RGBAImage {
    func rgb(_ x: Int, _ y: Int) -> RGB {
        let p = pixel(x: x, y: y)
        return RGB(r: Int(p.r), g: Int(p.g), b: Int(p.b))
    }
}

enum Patterns {
    /// An RGBA frame whose quadrants are red (top-left), green (top-right), blue (bottom-left), white (bottom-right).
    static func quadrants(width: Int, height: Int, rotation: Int = 0, presentationTime: MediaTime = .zero) -> VideoFrame {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let colour: RGB
                switch (x < width / 2, y < height / 2) {
                case (true, true): colour = .red
                case (false, true): colour = .green
                case (true, false): colour = .blue
                case (false, false): colour = .white
                }
                let i = (y * width + x) * 4
                pixels[i] = UInt8(colour.r)
                pixels[i + 1] = UInt8(colour.g)
                pixels[i + 2] = UInt8(colour.b)
            }
        }
        return VideoFrame(planes: [pixels], bytesPerRow: [width * 4], width: width, height: height,
                          pixelFormat: .rgba, presentationTime: presentationTime, rotation: rotation)
    }

    /// A uniform RGBA frame.
    static func solid(_ colour: RGB, width: Int = 64, height: Int = 36) -> VideoFrame {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) {
            pixels[i] = UInt8(colour.r)
            pixels[i + 1] = UInt8(colour.g)
            pixels[i + 2] = UInt8(colour.b)
        }
        return VideoFrame(planes: [pixels], bytesPerRow: [width * 4], width: width, height: height, pixelFormat: .rgba)
    }
}

/// Peak signal-to-noise ratio of two equal-size RGB byte arrays (3 bytes a pixel), in dB.
func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
    precondition(a.count == b.count)
    var sum = 0.0
    for i in a.indices {
        let d = Double(a[i]) - Double(b[i])
        sum += d * d
    }
    let mse = sum / Double(a.count)
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}

func log10(_ x: Double) -> Double { Foundation.log10(x) }

import Foundation
import MediaSinks
import Threading
