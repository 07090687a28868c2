import ChildProcesses
import Displays
import Foundation
import MediaTime
import Playback
import Testing
import MediaSinks

/// The video layer's YCbCr→RGB conversion against FFmpeg's own conversion of the same frame.
@Suite("Colour conversion")
struct ColorConversionTests {
    static let width = 320, height = 240

    /// Runs the ffmpeg CLI; returns its standard output.
    static func ffmpeg(_ arguments: [String]) throws -> Data {
        let result = try ChildProcess.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin"] + arguments)
        #expect(result.status == 0, "ffmpeg \(arguments.joined(separator: " ")): \(result.stderr)")
        return Data(result.standardOutput)
    }

    /// One smooth test picture (blurred test pattern) as raw `pixelFormat` bytes from FFmpeg.
    static func rawPicture(_ pixelFormat: String) throws -> [UInt8] {
        [UInt8](try ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=1,gblur=sigma=1.5", "-frames:v", "1",
            "-pix_fmt", pixelFormat, "-f", "rawvideo", "-",
        ]))
    }

    /// FFmpeg's RGB for raw `pixelFormat` bytes read with `matrix` and `range`.
    static func referenceRGB(_ raw: [UInt8], pixelFormat: String, matrix: String, range: String) throws -> [UInt8] {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-colour-\(UUID().uuidString).raw")
        try Data(raw).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        return [UInt8](try ffmpeg([
            "-f", "rawvideo", "-pix_fmt", pixelFormat, "-s", "\(width)x\(height)", "-i", input.path,
            "-vf", "scale=in_color_matrix=\(matrix):in_range=\(range):flags=bilinear+accurate_rnd+full_chroma_int",
            "-pix_fmt", "rgb24", "-f", "rawvideo", "-",
        ]))
    }

    static func frame(_ raw: [UInt8], pixelFormat: VideoFrame.PixelFormat, matrix: VideoFrame.ColorMatrix,
                      range: VideoFrame.ColorRange) -> VideoFrame {
        let w = width, h = height, lumaSize = w * h, chromaSize = (w / 2) * (h / 2)
        let planes: [[UInt8]], strides: [Int]
        switch pixelFormat {
        case .yuv420p:
            planes = [Array(raw[0..<lumaSize]), Array(raw[lumaSize..<lumaSize + chromaSize]),
                      Array(raw[lumaSize + chromaSize..<lumaSize + 2 * chromaSize])]
            strides = [w, w / 2, w / 2]
        case .nv12:
            planes = [Array(raw[0..<lumaSize]), Array(raw[lumaSize..<lumaSize + 2 * chromaSize])]
            strides = [w, w]
        case .p010:
            planes = [Array(raw[0..<2 * lumaSize]), Array(raw[2 * lumaSize..<2 * lumaSize + 4 * chromaSize])]
            strides = [2 * w, 2 * w]
        default:
            fatalError("not a YUV format")
        }
        return VideoFrame(planes: planes, bytesPerRow: strides, width: w, height: h, pixelFormat: pixelFormat,
                          colorMatrix: matrix, colorRange: range)
    }

    /// Renders `frame` 1:1 and returns the screen as RGB bytes.
    static func render(_ frame: VideoFrame, glesVersion: Int = 3) throws -> [UInt8] {
        let display = try HeadlessDisplay(mode: DisplayMode(width: width, height: height), gravity: .resize, pacing: .manual,
                                          maximumGLESVersion: glesVersion)
        defer { display.stop() }
        let source = ScriptedSource()
        display.setSource(source)
        source.enqueue(frame)
        try display.refresh()
        let image = try display.screenshot().image
        var rgb = [UInt8]()
        rgb.reserveCapacity(width * height * 3)
        for i in stride(from: 0, to: image.pixels.count, by: 4) { rgb += image.pixels[i..<i + 3] }
        return rgb
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var pixelFormat: VideoFrame.PixelFormat
        var ffmpegFormat: String
        var matrix: VideoFrame.ColorMatrix
        var range: VideoFrame.ColorRange
        var testDescription: String { "\(pixelFormat.rawValue) \(matrix.rawValue) \(range.rawValue)" }
    }

    static let cases: [Case] = [
        Case(pixelFormat: .yuv420p, ffmpegFormat: "yuv420p", matrix: .bt601, range: .limited),
        Case(pixelFormat: .yuv420p, ffmpegFormat: "yuv420p", matrix: .bt601, range: .full),
        Case(pixelFormat: .yuv420p, ffmpegFormat: "yuv420p", matrix: .bt709, range: .limited),
        Case(pixelFormat: .yuv420p, ffmpegFormat: "yuv420p", matrix: .bt709, range: .full),
        Case(pixelFormat: .yuv420p, ffmpegFormat: "yuv420p", matrix: .bt2020, range: .limited),
        Case(pixelFormat: .nv12, ffmpegFormat: "nv12", matrix: .bt709, range: .limited),
        Case(pixelFormat: .p010, ffmpegFormat: "p010le", matrix: .bt709, range: .limited),
    ]

    @Test("the GL conversion matches FFmpeg's within 35 dB PSNR", arguments: cases)
    func matchesFFmpeg(_ test: Case) throws {
        let raw = try Self.rawPicture(test.ffmpegFormat)
        let ffmpegRange = test.range == .limited ? "tv" : "pc"
        let reference = try Self.referenceRGB(raw, pixelFormat: test.ffmpegFormat, matrix: test.matrix.rawValue, range: ffmpegRange)
        #expect(reference.count == Self.width * Self.height * 3)
        let rendered = try Self.render(Self.frame(raw, pixelFormat: test.pixelFormat, matrix: test.matrix, range: test.range))
        let score = psnr(rendered, reference)
        #expect(score >= 35, "PSNR \(score) dB")
    }

    @Test("the GLES 2 paths (luminance textures, repacked rows) convert the same", arguments: cases.filter { $0.matrix == .bt709 })
    func gles2(_ test: Case) throws {
        let raw = try Self.rawPicture(test.ffmpegFormat)
        let reference = try Self.referenceRGB(raw, pixelFormat: test.ffmpegFormat, matrix: "bt709", range: test.range == .limited ? "tv" : "pc")
        let frame = Self.padded(Self.frame(raw, pixelFormat: test.pixelFormat, matrix: test.matrix, range: test.range))
        let score = psnr(try Self.render(frame, glesVersion: 2), reference)
        #expect(score >= 35, "PSNR \(score) dB")
    }

    @Test("rows padded past the picture (FFmpeg's aligned line sizes) upload correctly on GLES 3", arguments: cases.filter { $0.matrix == .bt709 })
    func paddedRows(_ test: Case) throws {
        let raw = try Self.rawPicture(test.ffmpegFormat)
        let reference = try Self.referenceRGB(raw, pixelFormat: test.ffmpegFormat, matrix: "bt709", range: test.range == .limited ? "tv" : "pc")
        let score = psnr(try Self.render(Self.padded(Self.frame(raw, pixelFormat: test.pixelFormat, matrix: test.matrix, range: test.range))), reference)
        #expect(score >= 35, "PSNR \(score) dB")
    }

    /// The same frame with 64 bytes of junk after every row, as FFmpeg's aligned buffers have.
    static func padded(_ frame: VideoFrame) -> VideoFrame {
        var planes: [[UInt8]] = [], strides: [Int] = []
        for plane in frame.planes {
            let rowBytes = plane.bytesPerRow
            var bytes = [UInt8]()
            for row in 0..<plane.height {
                bytes += UnsafeRawBufferPointer(start: plane.base + row * rowBytes, count: rowBytes)
                bytes += [UInt8](repeating: 0xAB, count: 64)
            }
            planes.append(bytes)
            strides.append(rowBytes + 64)
        }
        return VideoFrame(planes: planes, bytesPerRow: strides, width: frame.width, height: frame.height,
                          pixelFormat: frame.pixelFormat, colorMatrix: frame.colorMatrix, colorRange: frame.colorRange)
    }

    @Test("limited and full range give different pictures from the same bytes")
    func rangeMatters() throws {
        let raw = try Self.rawPicture("yuv420p")
        let limited = try Self.render(Self.frame(raw, pixelFormat: .yuv420p, matrix: .bt709, range: .limited))
        let full = try Self.render(Self.frame(raw, pixelFormat: .yuv420p, matrix: .bt709, range: .full))
        #expect(psnr(limited, full) < 30)
    }
}
