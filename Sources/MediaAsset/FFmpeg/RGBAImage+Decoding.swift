internal import CFFmpeg
public import MediaSinks

extension RGBAImage {
    /// Decodes a still image file (PNG, JPEG, anything libavformat's image demuxers read) to RGBA.
    ///
    /// - Throws: ``MediaError`` naming the file and the cause.
    public init(contentsOf path: String) throws(MediaError) {
        let demuxer = try Demuxer(source: path)
        guard let index = demuxer.bestStream(of: AVMEDIA_TYPE_VIDEO) else {
            throw MediaError(source: path, operation: "cannot read the image", reason: .noSuchTrack, detail: "(no picture in the file)")
        }
        let decoder = try Decoder(stream: demuxer.stream(at: index), source: path, threadCount: 1)
        let packet = Packet()
        let frame = Frame()
        var draining = false
        while true {
            switch try decoder.receive(into: frame) {
            case .frame:
                self = try RGBAScaler().image(from: frame, source: path)
                return
            case .endOfStream:
                throw MediaError(source: path, operation: "cannot read the image", reason: .corruptData, detail: "(no picture decoded)")
            case .needsInput:
                if draining { continue }
                if try demuxer.read(into: packet) {
                    if packet.streamIndex == index { _ = try decoder.send(packet) }
                } else {
                    draining = true
                    try decoder.drain()
                }
            }
        }
    }
}
