public import MediaTime

/// A decoded picture handed to a ``VideoSink``: plane pointers, strides and colour facts.
///
/// The pixel memory is owned by ``storage`` (an FFmpeg frame reference in the engine, a Swift
/// array in tests), so a frame can cross threads and stay valid until the last copy is gone.
public struct VideoFrame: Sendable {
    /// The layout of the planes.
    public enum PixelFormat: String, Sendable, Hashable {
        /// 8-bit Y, then quarter-size U and V planes.
        case yuv420p
        /// 8-bit Y plane, then one interleaved UV plane at quarter size.
        case nv12
        /// 10-bit (in the high bits of 16) Y plane, then interleaved UV at quarter size.
        case p010
        /// One plane of 8-bit R, G, B, A.
        case rgba
        /// One plane of 8-bit R, G, B.
        case rgb24
    }

    /// The YCbCr→RGB matrix the frame was encoded with.
    public enum ColorMatrix: String, Sendable, Hashable {
        case bt601, bt709, bt2020
    }

    /// Whether luma spans 16–235 (limited, "TV") or 0–255 (full, "PC").
    public enum ColorRange: String, Sendable, Hashable {
        case limited, full
    }

    /// One plane: its bytes, bytes per row, and size in samples.
    public struct Plane: @unchecked Sendable {
        public let base: UnsafeRawPointer
        public let bytesPerRow: Int
        public let width: Int
        public let height: Int
        public init(base: UnsafeRawPointer, bytesPerRow: Int, width: Int, height: Int) {
            self.base = base
            self.bytesPerRow = bytesPerRow
            self.width = width
            self.height = height
        }
    }

    /// Keeps the pixel memory alive.
    public let storage: any AnyObject & Sendable
    public let planes: [Plane]
    public let width: Int
    public let height: Int
    public let pixelFormat: PixelFormat
    public let colorMatrix: ColorMatrix
    public let colorRange: ColorRange
    /// Presentation time in the item's timeline.
    public let presentationTime: MediaTime
    /// How long the frame is meant to stay on screen (from the stream; may be invalid).
    public let duration: MediaTime
    /// The track's display rotation, clockwise degrees: 0, 90, 180 or 270.
    public let rotation: Int
    /// Pixel aspect ratio (1 for square pixels).
    public let sampleAspectRatio: Double

    public init(
        storage: any AnyObject & Sendable, planes: [Plane], width: Int, height: Int,
        pixelFormat: PixelFormat, colorMatrix: ColorMatrix = .bt709, colorRange: ColorRange = .limited,
        presentationTime: MediaTime, duration: MediaTime = .invalid, rotation: Int = 0,
        sampleAspectRatio: Double = 1
    ) {
        self.storage = storage
        self.planes = planes
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.colorMatrix = colorMatrix
        self.colorRange = colorRange
        self.presentationTime = presentationTime
        self.duration = duration
        self.rotation = rotation
        self.sampleAspectRatio = sampleAspectRatio
    }
}

/// Plane memory owned by Swift arrays: for tests and generated pictures.
// Unchecked: the pointers are written once in init and only read afterwards.
public final class ArrayFrameStorage: @unchecked Sendable {
    public let bytes: [[UInt8]]
    private let pointers: [UnsafeMutableRawPointer]

    public init(planes: [[UInt8]]) {
        bytes = planes
        // Copy into stable allocations so the plane pointers never move.
        pointers = planes.map { plane in
            let memory = UnsafeMutableRawPointer.allocate(byteCount: max(plane.count, 1), alignment: 64)
            plane.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: plane.count) }
            return memory
        }
    }

    deinit { pointers.forEach { $0.deallocate() } }

    public func pointer(plane: Int) -> UnsafeRawPointer { UnsafeRawPointer(pointers[plane]) }
}

extension VideoFrame {
    /// A frame over Swift arrays, one per plane, each tightly packed at `bytesPerRow[i]`.
    public init(
        planes: [[UInt8]], bytesPerRow: [Int], width: Int, height: Int, pixelFormat: PixelFormat,
        colorMatrix: ColorMatrix = .bt709, colorRange: ColorRange = .limited,
        presentationTime: MediaTime = .zero, rotation: Int = 0
    ) {
        let storage = ArrayFrameStorage(planes: planes)
        let sizes = VideoFrame.planeSizes(pixelFormat, width: width, height: height)
        let described = planes.indices.map { i in
            Plane(base: storage.pointer(plane: i), bytesPerRow: bytesPerRow[i], width: sizes[i].0, height: sizes[i].1)
        }
        self.init(
            storage: storage, planes: described, width: width, height: height, pixelFormat: pixelFormat,
            colorMatrix: colorMatrix, colorRange: colorRange, presentationTime: presentationTime, rotation: rotation)
    }

    /// Width and height in samples of each plane for a format.
    public static func planeSizes(_ format: PixelFormat, width: Int, height: Int) -> [(Int, Int)] {
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        switch format {
        case .yuv420p: return [(width, height), (chromaWidth, chromaHeight), (chromaWidth, chromaHeight)]
        case .nv12, .p010: return [(width, height), (chromaWidth, chromaHeight)]
        case .rgba, .rgb24: return [(width, height)]
        }
    }
}
