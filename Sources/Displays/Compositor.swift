internal import CEGL
import Logging
import MediaAsset
import MediaTime
import MediaSinks

/// Draws one screen: the video layers (each with its gravity, the track's rotation, colour conversion,
/// opacity and subtitle, inside its rectangle) and the overlays with their opacity and fades, in one
/// z-order, all turned by the output rotation.
///
/// Layers are laid out on the *canvas*: the upright screen, or on a video wall the whole wall's
/// picture measured in this screen's pixels, bezels included (``WallTile``). The screen shows the
/// canvas's rectangle at the tile's origin, so a picture or an overlay spanning two screens is cut
/// where the bezel hides it; the layers' rectangles, reported video rectangles and overlay frames
/// are all canvas pixels.
///
/// GLES 2.0 shaders throughout; GLES 3's unpack row length is used where the context has it.
/// Lives on the render thread with the EGL context; other threads reach it through ``LayerStack``
/// and the ``PlayerLayer``s in it. Each video layer has its own plane textures, uploaded only when
/// its source hands out a new frame.
final class Compositor {
    /// The upright screen (framebuffer size with axes swapped for 90/270).
    let canvasWidth: Int, canvasHeight: Int
    /// The canvas layers are laid out on (the screen, or the whole wall), and where the screen's
    /// top-left pixel is on it.
    let layoutWidth: Double, layoutHeight: Double
    let origin: (x: Double, y: Double)
    let framebufferWidth: Int, framebufferHeight: Int
    let rotation: Rotation

    private let logger: Logger
    private let rowLengthSupported: Bool
    private let glesMajorVersion: Int
    /// Whether YUV 4:2:0 pictures go up with their U and V planes interleaved into one two-channel
    /// texture (as NV12), sampled with one fetch: on a CPU rasteriser (llvmpipe) the fragment
    /// shader's texture fetches are most of the cost, and this draws 1080p ~30 % faster (44 → 58
    /// fps on two cores) for ~0.5 ms of interleaving per picture. The picture is the same: linear
    /// filtering treats the two channels independently. A GPU samples three planes for free.
    private let interleavesChroma: Bool
    /// The interleaved chroma of the last picture (reused from picture to picture).
    private var chromaScratch: [UInt8] = []
    /// The shader programs compiled so far. Each is compiled when first drawn with: a start
    /// compiles only the picture format it shows (on llvmpipe each program costs milliseconds of
    /// the time to the first frame).
    private var programs: [ProgramKind: GLProgram] = [:]
    /// Programs the driver would not compile or link, each logged once and then not drawn.
    private var failedPrograms: Set<ProgramKind> = []
    /// The video layers by identity, and their order (the root layer first, then as added).
    private var videoLayers: [ObjectIdentifier: VideoLayerState] = [:]
    private var videoOrder: [ObjectIdentifier] = []
    private var overlays: [OverlayState] = []
    private lazy var text: TextRasterizer? = {
        do { return try TextRasterizer() } catch {
            logger.error("text overlays unavailable", metadata: ["reason": "\(error)"])
            return nil
        }
    }()
    /// Something changed since the last draw.
    private var dirty = true
    /// The last draw caught a fade part-way: the next refresh must draw again.
    private var animating = false

    private struct VideoState {
        var kind: VideoProgramKind
        var width: Int, height: Int
        var rotation: Rotation
        var sampleAspectRatio: Double
        var conversion: ColorConversion
    }

    /// One video layer: its textures, its picture and subtitle, how it is drawn.
    private struct VideoLayerState {
        let layer: PlayerLayer
        let planeTextures: [GLTexture]
        var appearance: PlayerLayer.Appearance
        /// ``appearance``'s frame in canvas pixels.
        var bounds: ScreenRect
        var video: VideoState?
        var subtitle: SubtitleState?
        /// The video rectangle last told to the layer.
        var reportedRect: ScreenRect = .zero
    }

    private struct SubtitleState {
        var key: String
        var texture: GLTexture
        var rect: (x: Double, y: Double, width: Double, height: Double)
        var fitsVideo: Bool
        var referenceRect: (x: Double, y: Double, width: Double, height: Double, referenceWidth: Int, referenceHeight: Int)?
    }

    private struct OverlayState {
        var id: OverlayID
        var overlay: OverlayLayer
        var texture: GLTexture
        var rect: (x: Double, y: Double, width: Double, height: Double)
        /// Where the overlay's frame put it, in canvas pixels (``rect`` is the drawn part inside it).
        var origin: (x: Double, y: Double)
        var addedAt: MediaTime
        var removedAt: MediaTime?
    }

    init(framebufferWidth: Int, framebufferHeight: Int, rotation: Rotation, wall: WallTile = .whole, glesMajorVersion: Int, rendererName: String,
         logger: Logger) throws(DisplayError) {
        self.framebufferWidth = framebufferWidth
        self.framebufferHeight = framebufferHeight
        self.rotation = rotation
        self.canvasWidth = rotation.swapsAxes ? framebufferHeight : framebufferWidth
        self.canvasHeight = rotation.swapsAxes ? framebufferWidth : framebufferHeight
        (layoutWidth, layoutHeight) = wall.canvas(screenWidth: canvasWidth, screenHeight: canvasHeight)
        origin = wall.origin(screenWidth: canvasWidth, screenHeight: canvasHeight)
        self.logger = logger
        self.rowLengthSupported = glesMajorVersion >= 3
        self.glesMajorVersion = glesMajorVersion
        interleavesChroma = ["llvmpipe", "softpipe", "swrast"].contains { rendererName.contains($0) }
        // The program the most common pictures (YUV 4:2:0) draw with, compiled now: a driver that
        // cannot compile GLSL ES fails the display's start, not its first frame.
        let common: VideoProgramKind = interleavesChroma ? .nv12 : .yuv420p
        programs[.video(common)] = try compile(.video(common))
    }

    /// Which shader program: one per picture plane layout, and the one for overlays and subtitles.
    enum ProgramKind: Hashable, CustomStringConvertible {
        case video(VideoProgramKind)
        case overlay
        var description: String {
            switch self {
            case .video(let kind): return "\(kind)"
            case .overlay: return "overlay"
            }
        }
    }

    private func compile(_ kind: ProgramKind) throws(DisplayError) -> GLProgram {
        switch kind {
        case .video(let video):
            return try GLProgram(vertex: Shaders.vertex, fragment: video.fragmentShader(twoChannel: glesMajorVersion >= 3 ? "rg" : "ra"),
                                 label: "\(video)")
        case .overlay:
            return try GLProgram(vertex: Shaders.vertex, fragment: Shaders.overlay, label: "overlay")
        }
    }

    /// The program for `kind`, compiled on first use; `nil` (logged once) when the driver refuses it.
    private func program(_ kind: ProgramKind) -> GLProgram? {
        if let program = programs[kind] { return program }
        guard !failedPrograms.contains(kind) else { return nil }
        do {
            let program = try compile(kind)
            programs[kind] = program
            return program
        } catch {
            failedPrograms.insert(kind)
            logger.error("shader program refused by the driver; what needs it is not drawn", metadata: [
                "program": "\(kind)", "reason": "\(error)"])
            return nil
        }
    }

    // MARK: Changes (render thread)

    /// Applies the layer changes of one refresh: at `time`, or at `frameTime` for those made while
    /// the source handed out the refresh's frame.
    func apply(_ changes: [LayerStack.PendingChange], at refreshTime: MediaTime, withFrameAt frameTime: MediaTime) {
        for pending in changes {
            dirty = true
            let time = pending.withFrame ? frameTime : refreshTime
            switch pending.change {
            case .add(let id, let overlay):
                let resolved = overlay.frame.resolve(canvasWidth: layoutWidth, canvasHeight: layoutHeight)
                let rect = (x: resolved.x, y: resolved.y, width: resolved.width, height: resolved.height)
                let texture = GLTexture()
                let image: RGBAImage
                var drawRect = rect
                switch overlay.content {
                case .image(let picture):
                    image = picture
                    let placed = VideoLayout.place(pictureWidth: picture.width, pictureHeight: picture.height,
                                                   in: rect, gravity: .resizeAspect)
                    drawRect = (placed.x, placed.y, placed.width, placed.height)
                case .text(let words, let style):
                    guard let rasterizer = text else { continue }
                    let full: RGBAImage
                    do {
                        full = try rasterizer.render(words, style: style, width: Int(rect.width), height: Int(rect.height))
                    } catch {
                        logger.error("text overlay skipped", metadata: ["overlay": "\(id)", "reason": "\(error)"])
                        continue
                    }
                    // Only the visible part is kept, so blending touches no transparent pixels.
                    guard let visible = Compositor.opaqueBounds(full) else { continue }
                    image = Compositor.crop(full, visible)
                    drawRect = (rect.x + Double(visible.x), rect.y + Double(visible.y), Double(visible.width), Double(visible.height))
                }
                guard image.width > 0, image.height > 0 else { continue }
                image.pixels.withUnsafeBytes { bytes in
                    texture.upload(bytes.baseAddress!, width: image.width, height: image.height, bytesPerRow: image.width * 4,
                                   bytesPerSample: 4, format: GLenum(GL_RGBA), rowLengthSupported: rowLengthSupported)
                }
                overlays.append(OverlayState(id: id, overlay: overlay, texture: texture, rect: drawRect, origin: (rect.x, rect.y), addedAt: time))
            case .move(let id, let frame):
                guard let index = overlays.firstIndex(where: { $0.id == id }) else { continue }
                let target = frame.resolve(canvasWidth: layoutWidth, canvasHeight: layoutHeight)
                let dx = target.x - overlays[index].origin.x, dy = target.y - overlays[index].origin.y
                overlays[index].rect.x += dx
                overlays[index].rect.y += dy
                overlays[index].origin = (target.x, target.y)
                overlays[index].overlay.frame = frame
            case .remove(let id):
                if let index = overlays.firstIndex(where: { $0.id == id }), overlays[index].removedAt == nil {
                    overlays[index].removedAt = time
                }
            }
        }
    }

    /// The smallest rectangle holding every pixel with some alpha, or `nil` for a transparent image.
    static func opaqueBounds(_ image: RGBAImage) -> (x: Int, y: Int, width: Int, height: Int)? {
        var minX = image.width, minY = image.height, maxX = -1, maxY = -1
        image.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<image.height {
                let row = y * image.width * 4
                for x in 0..<image.width where pixels[row + x * 4 + 3] != 0 {
                    minX = min(minX, x)
                    maxX = max(maxX, x)
                    minY = min(minY, y)
                    maxY = max(maxY, y)
                }
            }
        }
        guard maxX >= 0 else { return nil }
        return (minX, minY, maxX - minX + 1, maxY - minY + 1)
    }

    static func crop(_ image: RGBAImage, _ area: (x: Int, y: Int, width: Int, height: Int)) -> RGBAImage {
        if area.x == 0, area.y == 0, area.width == image.width, area.height == image.height { return image }
        var pixels = [UInt8]()
        pixels.reserveCapacity(area.width * area.height * 4)
        for y in area.y..<area.y + area.height {
            let start = (y * image.width + area.x) * 4
            pixels += image.pixels[start..<start + area.width * 4]
        }
        return RGBAImage(width: area.width, height: area.height, pixels: pixels)
    }

    // MARK: Video layers (render thread)

    /// Takes the refresh's video layers and their appearance, in drawing order of equal z (the root
    /// layer first): new layers get their textures, layers no longer listed lose theirs, a changed
    /// appearance redraws.
    func syncVideoLayers(_ layers: [(layer: PlayerLayer, appearance: PlayerLayer.Appearance)]) {
        let ids = layers.map { ObjectIdentifier($0.layer) }
        if ids != videoOrder {
            let kept = Set(ids)
            for id in videoOrder where !kept.contains(id) { videoLayers[id] = nil }
            videoOrder = ids
            dirty = true
        }
        for (layer, appearance) in layers {
            let id = ObjectIdentifier(layer)
            if var state = videoLayers[id] {
                guard state.appearance != appearance else { continue }
                state.appearance = appearance
                state.bounds = appearance.frame.resolve(canvasWidth: layoutWidth, canvasHeight: layoutHeight)
                videoLayers[id] = state
            } else {
                videoLayers[id] = VideoLayerState(
                    layer: layer, planeTextures: [GLTexture(), GLTexture(), GLTexture()], appearance: appearance,
                    bounds: appearance.frame.resolve(canvasWidth: layoutWidth, canvasHeight: layoutHeight))
            }
            dirty = true
        }
    }

    /// Uploads a new picture for `layer` (the frame's memory may go once this returns).
    func setVideo(_ frame: VideoFrame, in layer: PlayerLayer) {
        guard var state = videoLayers[ObjectIdentifier(layer)] else { return }
        dirty = true
        let interleaving = interleavesChroma && frame.pixelFormat == .yuv420p && frame.planes.count == 3
        let kind: VideoProgramKind
        switch frame.pixelFormat {
        case .yuv420p: kind = interleaving ? .nv12 : .yuv420p
        case .nv12: kind = .nv12
        case .p010: kind = .p010
        case .rgba, .rgb24: kind = .rgb
        }
        // GLES 3 has sized one- and two-channel formats that llvmpipe and GPUs store as they come;
        // GLES 2 has only luminance (alpha).
        let one: (GLenum, GLenum) = rowLengthSupported ? (GLenum(GL_RED), GLenum(GL_R8)) : (GLenum(GL_LUMINANCE), GLenum(GL_LUMINANCE))
        let two: (GLenum, GLenum) = rowLengthSupported ? (GLenum(GL_RG), GLenum(GL_RG8)) : (GLenum(GL_LUMINANCE_ALPHA), GLenum(GL_LUMINANCE_ALPHA))
        let rgba = (GLenum(GL_RGBA), GLenum(GL_RGBA)), rgb = (GLenum(GL_RGB), GLenum(GL_RGB))
        let layouts: [(format: (GLenum, GLenum), bytesPerSample: Int)]
        switch frame.pixelFormat {
        case .yuv420p: layouts = Array(repeating: (one, 1), count: 3)
        case .nv12: layouts = [(one, 1), (two, 2)]
        case .p010: layouts = [(two, 2), (rgba, 4)]
        case .rgba: layouts = [(rgba, 4)]
        case .rgb24: layouts = [(rgb, 3)]
        }
        let sizes = VideoFrame.planeSizes(frame.pixelFormat, width: frame.width, height: frame.height)
        if interleaving {
            let luma = frame.planes[0]
            state.planeTextures[0].upload(luma.base, width: sizes[0].0, height: sizes[0].1, bytesPerRow: luma.bytesPerRow,
                                          bytesPerSample: 1, format: one.0, internalFormat: one.1, rowLengthSupported: rowLengthSupported)
            let (width, height) = sizes[1]
            interleaveChroma(frame.planes[1], frame.planes[2], width: width, height: height)
            chromaScratch.withUnsafeBytes { bytes in
                state.planeTextures[1].upload(bytes.baseAddress!, width: width, height: height, bytesPerRow: width * 2,
                                              bytesPerSample: 2, format: two.0, internalFormat: two.1, rowLengthSupported: rowLengthSupported)
            }
        } else {
            for (index, layout) in layouts.enumerated() where index < frame.planes.count {
                let plane = frame.planes[index]
                state.planeTextures[index].upload(plane.base, width: sizes[index].0, height: sizes[index].1,
                                                  bytesPerRow: plane.bytesPerRow, bytesPerSample: layout.bytesPerSample,
                                                  format: layout.format.0, internalFormat: layout.format.1,
                                                  rowLengthSupported: rowLengthSupported)
            }
        }
        state.video = VideoState(
            kind: kind, width: frame.width, height: frame.height,
            rotation: Rotation(degrees: frame.rotation) ?? .none, sampleAspectRatio: frame.sampleAspectRatio,
            conversion: ColorConversion(matrix: frame.colorMatrix, range: frame.colorRange, sixteenBit: frame.pixelFormat == .p010))
        videoLayers[ObjectIdentifier(layer)] = state
    }

    /// Writes `u` and `v` (each `width`×`height` samples) into ``chromaScratch`` as UVUV… rows.
    private func interleaveChroma(_ u: VideoFrame.Plane, _ v: VideoFrame.Plane, width: Int, height: Int) {
        let count = width * height * 2
        if chromaScratch.count != count { chromaScratch = [UInt8](repeating: 0, count: count) }
        chromaScratch.withUnsafeMutableBufferPointer { destination in
            let output = destination.baseAddress!
            for row in 0..<height {
                let uRow = u.base.advanced(by: row * u.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                let vRow = v.base.advanced(by: row * v.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                let line = output + row * width * 2
                for column in 0..<width {
                    line[2 * column] = uRow[column]
                    line[2 * column + 1] = vRow[column]
                }
            }
        }
    }

    /// Shows, replaces or clears `layer`'s subtitle, laid out in its video rectangle.
    func setSubtitle(_ content: SubtitleContent?, in layer: PlayerLayer) {
        guard var state = videoLayers[ObjectIdentifier(layer)] else { return }
        defer { videoLayers[ObjectIdentifier(layer)] = state }
        guard let content else {
            if state.subtitle != nil { dirty = true }
            state.subtitle = nil
            return
        }
        switch content {
        case .text(let words):
            if state.subtitle?.key == "text:" + words { return }
            guard let rasterizer = text else { return }
            let videoRect = currentVideoRect(state)
            let bounds = state.bounds
            let width = Int(min(videoRect.width, bounds.width) * 0.9)
            let height = Int(min(videoRect.height, bounds.height) * 0.4)
            let pixelSize = max(Int(min(videoRect.height, bounds.height) / 18), 12)
            let style = TextStyle(pixelSize: pixelSize, color: .white, background: .translucentBlack,
                                  alignment: .center, padding: max(pixelSize / 4, 4))
            guard width > 0, height > 0,
                  let image = try? rasterizer.render(words, style: style, width: width, height: height, anchoredToBottom: true)
            else { return }
            let texture = state.subtitle?.texture ?? GLTexture()
            image.pixels.withUnsafeBytes { bytes in
                texture.upload(bytes.baseAddress!, width: image.width, height: image.height, bytesPerRow: image.width * 4,
                               bytesPerSample: 4, format: GLenum(GL_RGBA), rowLengthSupported: rowLengthSupported)
            }
            let visibleBottom = min(videoRect.y + videoRect.height, bounds.maxY)
            let rect = (bounds.x + (bounds.width - Double(width)) / 2, visibleBottom - Double(height) - bounds.height * 0.03,
                        Double(width), Double(height))
            state.subtitle = SubtitleState(key: "text:" + words, texture: texture, rect: rect, fitsVideo: false, referenceRect: nil)
        case .bitmap(let frame, let x, let y, let referenceWidth, let referenceHeight):
            guard frame.pixelFormat == .rgba, let plane = frame.planes.first else { return }
            let texture = state.subtitle?.texture ?? GLTexture()
            texture.upload(plane.base, width: frame.width, height: frame.height, bytesPerRow: plane.bytesPerRow,
                           bytesPerSample: 4, format: GLenum(GL_RGBA), rowLengthSupported: rowLengthSupported)
            state.subtitle = SubtitleState(
                key: "bitmap", texture: texture, rect: (0, 0, 0, 0), fitsVideo: true,
                referenceRect: (Double(x), Double(y), Double(frame.width), Double(frame.height), referenceWidth, referenceHeight))
        }
        dirty = true
    }

    /// Tells each video layer where its picture lands now (only when that changed).
    func reportVideoRects() {
        for id in videoOrder {
            guard var state = videoLayers[id] else { continue }
            let rect: ScreenRect
            if let video = state.video {
                let layout = videoLayout(video, in: state)
                rect = ScreenRect(x: layout.x, y: layout.y, width: layout.width, height: layout.height)
            } else {
                rect = .zero
            }
            guard rect != state.reportedRect else { continue }
            state.reportedRect = rect
            videoLayers[id] = state
            state.layer.setVideoRect(rect)
        }
    }

    /// This screen's rectangle on the canvas.
    private var screenRect: ScreenRect {
        ScreenRect(x: origin.x, y: origin.y, width: Double(canvasWidth), height: Double(canvasHeight))
    }

    /// Whether the screen would change if drawn at `time`.
    func needsDrawing(at time: MediaTime) -> Bool { dirty || animating }

    // MARK: Drawing

    /// The layer's picture rectangle in canvas pixels (its bounds while it has none).
    private func currentVideoRect(_ state: VideoLayerState) -> (x: Double, y: Double, width: Double, height: Double) {
        guard let video = state.video else { return (state.bounds.x, state.bounds.y, state.bounds.width, state.bounds.height) }
        let layout = videoLayout(video, in: state)
        return (layout.x, layout.y, layout.width, layout.height)
    }

    private func videoLayout(_ video: VideoState, in state: VideoLayerState) -> VideoLayout {
        let bounds = state.bounds
        return VideoLayout.place(pictureWidth: video.width, pictureHeight: video.height, sampleAspectRatio: video.sampleAspectRatio,
                                 rotation: video.rotation, in: (bounds.x, bounds.y, bounds.width, bounds.height),
                                 gravity: state.appearance.videoGravity)
    }

    /// Opacity factor of an overlay's fades at `time`, and whether a fade is still under way.
    private func fade(_ state: OverlayState, at time: MediaTime) -> (factor: Double, inProgress: Bool) {
        var factor = 1.0, inProgress = false
        let fadeIn = state.overlay.fadeIn.seconds
        if fadeIn > 0 {
            let progress = (time - state.addedAt).seconds / fadeIn
            factor *= min(max(progress, 0), 1)
            if progress < 1 { inProgress = true }
        }
        if let removedAt = state.removedAt {
            let fadeOut = state.overlay.fadeOut.seconds
            let progress = fadeOut > 0 ? (time - removedAt).seconds / fadeOut : 1
            factor *= 1 - min(max(progress, 0), 1)
            if progress < 1 { inProgress = true }
        }
        return (factor, inProgress)
    }

    /// One thing to draw, in z-order: a video layer (with its subtitle) or an overlay.
    private enum Drawable {
        case video(ObjectIdentifier)
        case overlay(Int)
    }

    /// Draws the whole screen into the bound framebuffer, as it is at host time `time`: the layers
    /// by z-order (at equal z video layers below overlays, then in the order they came).
    func draw(at time: MediaTime) {
        glViewport(0, 0, GLsizei(framebufferWidth), GLsizei(framebufferHeight))
        glDisable(GLenum(GL_BLEND))
        glClearColor(0, 0, 0, 1)
        glClear(GLbitfield(GL_COLOR_BUFFER_BIT))

        var order: [(z: Double, kind: Int, index: Int, drawable: Drawable)] = []
        for (index, id) in videoOrder.enumerated() {
            guard let state = videoLayers[id], state.video != nil, !state.appearance.isHidden, state.appearance.opacity > 0 else { continue }
            order.append((state.appearance.zPosition, 0, index, .video(id)))
        }
        for (index, state) in overlays.enumerated() { order.append((Double(state.overlay.zIndex), 1, index, .overlay(index))) }
        order.sort { ($0.z, $0.kind, $0.index) < ($1.z, $1.kind, $1.index) }

        animating = false
        var finished: [OverlayID] = []
        for entry in order {
            switch entry.drawable {
            case .video(let id):
                if let state = videoLayers[id] { drawVideoLayer(state) }
            case .overlay(let index):
                let state = overlays[index]
                let (factor, inProgress) = fade(state, at: time)
                if inProgress { animating = true }
                if state.removedAt != nil, !inProgress { finished.append(state.id) }
                let opacity = state.overlay.opacity * factor
                guard opacity > 0 else { continue }
                guard let overlayProgram = useOverlayProgram() else { continue }
                if let clip = state.overlay.clip {
                    let bounds = clip.resolve(canvasWidth: layoutWidth, canvasHeight: layoutHeight)
                    guard let visible = Compositor.intersect(state.rect, (bounds.x, bounds.y, bounds.width, bounds.height)) else { continue }
                    drawTexture(state.texture, in: visible.rect, textureCorners: visible.corners, opacity: opacity, program: overlayProgram)
                } else {
                    drawTexture(state.texture, in: state.rect, opacity: opacity, program: overlayProgram)
                }
            }
        }
        overlays.removeAll { finished.contains($0.id) }
        dirty = false
    }

    /// Draws one video layer's picture, cropped to its bounds, then its subtitle.
    private func drawVideoLayer(_ state: VideoLayerState) {
        guard let video = state.video, let program = program(.video(video.kind)) else { return }
        let layout = videoLayout(video, in: state)
        // Only what this screen shows of it: on a wall, the layer's part in this tile.
        guard let shown = state.bounds.intersection(screenRect), let visible = layout.clipped(to: shown) else { return }
        let opacity = state.appearance.opacity
        if opacity < 1 {
            glEnable(GLenum(GL_BLEND))
            glBlendFuncSeparate(GLenum(GL_SRC_ALPHA), GLenum(GL_ONE_MINUS_SRC_ALPHA), GLenum(GL_ZERO), GLenum(GL_ONE))
        } else {
            // Opaque: no blending, which a software rasteriser pays for per pixel.
            glDisable(GLenum(GL_BLEND))
        }
        program.use()
        // The full-resolution plane drawn at its own size samples texel centres: nearest is exact
        // there and much cheaper than linear. Chroma planes are upsampled, so they stay linear.
        state.planeTextures[0].setSamplesNearest(layout.isPixelExact(pictureWidth: video.width, pictureHeight: video.height, rotation: video.rotation))
        for index in 0..<video.kind.planeCount {
            glActiveTexture(GLenum(GL_TEXTURE0 + Int32(index)))
            glBindTexture(GLenum(GL_TEXTURE_2D), state.planeTextures[index].name)
            glUniform1i(program.uniform("u_plane\(index)"), GLint(index))
        }
        glActiveTexture(GLenum(GL_TEXTURE0))
        glUniformMatrix3fv(program.uniform("u_matrix"), 1, GLboolean(GL_FALSE), video.conversion.matrix)
        glUniform3f(program.uniform("u_offset"), video.conversion.offset[0], video.conversion.offset[1], video.conversion.offset[2])
        glUniform1f(program.uniform("u_opacity"), GLfloat(opacity))
        glUniformMatrix2fv(program.uniform("u_output"), 1, GLboolean(GL_FALSE), rotation.outputMatrix)
        drawQuad(visible.vertices(canvasWidth: canvasWidth, canvasHeight: canvasHeight, origin: origin))

        if let subtitle = state.subtitle {
            var rect = subtitle.rect
            if let reference = subtitle.referenceRect, reference.referenceWidth > 0, reference.referenceHeight > 0 {
                let videoRect = (layout.x, layout.y, layout.width, layout.height)
                let scaleX = videoRect.2 / Double(reference.referenceWidth)
                let scaleY = videoRect.3 / Double(reference.referenceHeight)
                rect = (videoRect.0 + reference.x * scaleX, videoRect.1 + reference.y * scaleY,
                        reference.width * scaleX, reference.height * scaleY)
            }
            guard let overlayProgram = useOverlayProgram() else { return }
            drawTexture(subtitle.texture, in: rect, opacity: opacity, program: overlayProgram)
        }
    }

    /// Switches to the overlay program with blending (colour blended, the framebuffer kept opaque).
    private func useOverlayProgram() -> GLProgram? {
        guard let overlayProgram = program(.overlay) else { return nil }
        glEnable(GLenum(GL_BLEND))
        glBlendFuncSeparate(GLenum(GL_SRC_ALPHA), GLenum(GL_ONE_MINUS_SRC_ALPHA), GLenum(GL_ZERO), GLenum(GL_ONE))
        overlayProgram.use()
        glActiveTexture(GLenum(GL_TEXTURE0))
        glUniform1i(overlayProgram.uniform("u_plane0"), 0)
        glUniformMatrix2fv(overlayProgram.uniform("u_output"), 1, GLboolean(GL_FALSE), rotation.outputMatrix)
        return overlayProgram
    }

    /// The part of `rect` inside `clip`, and the texture coordinates of its corners (top-left,
    /// top-right, bottom-left, bottom-right) for a texture that covers all of `rect`; nil when
    /// nothing of it is inside.
    static func intersect(
        _ rect: (x: Double, y: Double, width: Double, height: Double), _ clip: (x: Double, y: Double, width: Double, height: Double)
    ) -> (rect: (x: Double, y: Double, width: Double, height: Double), corners: [(Double, Double)])? {
        let left = max(rect.x, clip.x), right = min(rect.x + rect.width, clip.x + clip.width)
        let top = max(rect.y, clip.y), bottom = min(rect.y + rect.height, clip.y + clip.height)
        guard right > left, bottom > top, rect.width > 0, rect.height > 0 else { return nil }
        let u0 = (left - rect.x) / rect.width, u1 = (right - rect.x) / rect.width
        let v0 = (top - rect.y) / rect.height, v1 = (bottom - rect.y) / rect.height
        return ((left, top, right - left, bottom - top), [(u0, v0), (u1, v0), (u0, v1), (u1, v1)])
    }

    private func drawTexture(
        _ texture: GLTexture, in rect: (x: Double, y: Double, width: Double, height: Double),
        textureCorners: [(Double, Double)] = [(0, 0), (1, 0), (0, 1), (1, 1)], opacity: Double, program overlayProgram: GLProgram
    ) {
        glBindTexture(GLenum(GL_TEXTURE_2D), texture.name)
        glUniform1f(overlayProgram.uniform("u_opacity"), GLfloat(opacity))
        let layout = VideoLayout(x: rect.x, y: rect.y, width: rect.width, height: rect.height,
                                 textureCorners: textureCorners)
        drawQuad(layout.vertices(canvasWidth: canvasWidth, canvasHeight: canvasHeight, origin: origin))
    }

    private func drawQuad(_ vertices: [Float]) {
        glBindBuffer(GLenum(GL_ARRAY_BUFFER), 0)
        vertices.withUnsafeBytes { bytes in
            let stride = GLsizei(4 * MemoryLayout<Float>.size)
            glVertexAttribPointer(0, 2, GLenum(GL_FLOAT), GLboolean(GL_FALSE), stride, bytes.baseAddress)
            glVertexAttribPointer(1, 2, GLenum(GL_FLOAT), GLboolean(GL_FALSE), stride, bytes.baseAddress! + 2 * MemoryLayout<Float>.size)
            glEnableVertexAttribArray(0)
            glEnableVertexAttribArray(1)
            glDrawArrays(GLenum(GL_TRIANGLE_STRIP), 0, 4)
        }
    }
}

/// A video layer's shader per plane layout.
enum VideoProgramKind: CaseIterable, CustomStringConvertible {
    case yuv420p, nv12, p010, rgb

    var planeCount: Int {
        switch self {
        case .yuv420p: return 3
        case .nv12, .p010: return 2
        case .rgb: return 1
        }
    }

    var description: String {
        switch self {
        case .yuv420p: return "YUV420P"
        case .nv12: return "NV12"
        case .p010: return "P010"
        case .rgb: return "RGB"
        }
    }

    /// The fragment shader; `twoChannel` is the swizzle of a two-channel texture (`rg` for GLES 3's RG8,
    /// `ra` for GLES 2's luminance-alpha).
    func fragmentShader(twoChannel: String) -> String {
        let sample: String
        switch self {
        case .yuv420p:
            sample = "vec3(texture2D(u_plane0, v_texcoord).r, texture2D(u_plane1, v_texcoord).r, texture2D(u_plane2, v_texcoord).r)"
        case .nv12:
            sample = "vec3(texture2D(u_plane0, v_texcoord).r, texture2D(u_plane1, v_texcoord).\(twoChannel))"
        case .p010:
            // 16-bit little-endian samples arrive as byte pairs (low in r, high in a/g); linear filtering of
            // both bytes is still linear in the 16-bit value. The weights are pre-divided by 65535 so no
            // intermediate leaves mediump's range (2^14) on GPUs that compute at half precision.
            sample = """
                vec3(dot(texture2D(u_plane0, v_texcoord).\(twoChannel), k16),
                         dot(texture2D(u_plane1, v_texcoord).rg, k16),
                         dot(texture2D(u_plane1, v_texcoord).ba, k16))
                """
        case .rgb:
            return Shaders.header + """
                uniform sampler2D u_plane0;
                uniform float u_opacity;
                void main() { gl_FragColor = vec4(texture2D(u_plane0, v_texcoord).rgb, u_opacity); }
                """
        }
        return Shaders.header + """
            uniform sampler2D u_plane0;
            uniform sampler2D u_plane1;
            uniform sampler2D u_plane2;
            uniform mat3 u_matrix;
            uniform vec3 u_offset;
            uniform float u_opacity;
            const vec2 k16 = vec2(255.0 / 65535.0, 65280.0 / 65535.0);
            void main() {
                vec3 raw = \(sample);
                gl_FragColor = vec4(clamp(u_matrix * (raw - u_offset), 0.0, 1.0), u_opacity);
            }
            """
    }
}

enum Shaders {
    static let vertex = """
        attribute vec2 a_position;
        attribute vec2 a_texcoord;
        uniform mat2 u_output;
        varying vec2 v_texcoord;
        void main() {
            v_texcoord = a_texcoord;
            gl_Position = vec4(u_output * a_position, 0.0, 1.0);
        }
        """
    static let header = """
        #ifdef GL_FRAGMENT_PRECISION_HIGH
        precision highp float;
        #else
        precision mediump float;
        #endif
        varying vec2 v_texcoord;

        """
    static let overlay = header + """
        uniform sampler2D u_plane0;
        uniform float u_opacity;
        void main() {
            vec4 colour = texture2D(u_plane0, v_texcoord);
            gl_FragColor = vec4(colour.rgb, colour.a * u_opacity);
        }
        """
}
