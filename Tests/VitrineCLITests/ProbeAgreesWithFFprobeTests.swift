import Foundation
import Testing

/// `vitrine probe --json` against `ffprobe -of json`, field by field.
@Suite("probe agrees with ffprobe", .enabled(if: CommandRunner.canRun, "needs fixtures, the vitrine binary, ffmpeg and ffprobe"))
struct ProbeAgreesWithFFprobeTests {
    static let fixtures = [
        "h264_aac.mp4", "hevc.mkv", "vp9_opus.webm", "mpeg2.ts", "rotated.mp4", "ntsc.mp4",
        "multilang.mkv", "tagged.m4a", "queue1.mp4", "bad/unsupported.avi",
    ]

    private func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Seconds as microseconds, as ffprobe prints them ("10.000000") and Vitrine stores them.
    private func microseconds(_ value: Any?) -> Int64? {
        if let text = value as? String, let seconds = Double(text) { return Int64((seconds * 1_000_000).rounded()) }
        if let number = value as? NSNumber { return Int64((number.doubleValue * 1_000_000).rounded()) }
        return nil
    }

    @Test("format, duration, tracks, codecs, sizes, rotation, rates, languages and title match", arguments: fixtures)
    func agrees(fixture: String) throws {
        let path = CommandRunner.fixture(fixture)
        let ours = try CommandRunner.vitrine(["probe", "--json", path])
        // unsupported.avi describes itself, then fails as unplayable.
        #expect(ours.status == (fixture.hasPrefix("bad/") ? 1 : 0), "\(ours.stderr)")
        let theirs = try CommandRunner.run("ffprobe", ["-v", "error", "-show_format", "-show_streams", "-of", "json", path])
        #expect(theirs.status == 0)
        let vitrine = try json(ours.stdoutData)
        let ffprobe = try json(theirs.stdoutData)

        let format = try #require(vitrine["format"] as? [String: Any])
        let ffFormat = try #require(ffprobe["format"] as? [String: Any])
        #expect(format["name"] as? String == ffFormat["format_name"] as? String)
        #expect(format["longName"] as? String == ffFormat["format_long_name"] as? String)
        #expect(microseconds(format["duration"]) == microseconds(ffFormat["duration"]), "duration to the microsecond")
        #expect(microseconds(format["startTime"]) == microseconds(ffFormat["start_time"]))
        #expect(format["trackCount"] as? Int == ffFormat["nb_streams"] as? Int)
        let ffTags = ffFormat["tags"] as? [String: String] ?? [:]
        let metadata = vitrine["metadata"] as? [String: String] ?? [:]
        #expect(metadata["title"] == ffTags["title"])
        let common = vitrine["commonMetadata"] as? [String: Any] ?? [:]
        #expect(common["title"] as? String == ffTags["title"])

        let tracks = try #require(vitrine["tracks"] as? [[String: Any]])
        let streams = try #require(ffprobe["streams"] as? [[String: Any]])
        try #require(tracks.count == streams.count)
        for (track, stream) in zip(tracks, streams) {
            let index = stream["index"] as? Int
            #expect(track["index"] as? Int == index)
            let type = stream["codec_type"] as? String
            #expect(track["type"] as? String == (type == "attachment" ? "data" : type), "stream \(index ?? -1)")
            #expect(track["codec"] as? String == (stream["codec_name"] as? String ?? "unknown"), "stream \(index ?? -1)")
            #expect(track["timeBase"] as? String == stream["time_base"] as? String)
            if let start = stream["start_time"] { #expect(microseconds(track["startTime"]) == microseconds(start)) }
            if let duration = stream["duration"] { #expect(microseconds(track["duration"]) == microseconds(duration)) }
            let tags = stream["tags"] as? [String: String] ?? [:]
            let language = tags["language"].flatMap { $0 == "und" ? nil : $0 }
            #expect(track["language"] as? String == language, "stream \(index ?? -1) language")
            if type == "video" {
                #expect(track["width"] as? Int == stream["width"] as? Int)
                #expect(track["height"] as? Int == stream["height"] as? Int)
                #expect(track["frameRate"] as? String == stream["avg_frame_rate"] as? String)
                #expect(track["realFrameRate"] as? String == stream["r_frame_rate"] as? String)
                #expect(track["pixelFormat"] as? String == stream["pix_fmt"] as? String)
                let sideData = stream["side_data_list"] as? [[String: Any]] ?? []
                let ffRotation = sideData.compactMap { $0["rotation"] as? Int }.first
                #expect((track["displayMatrixRotation"] as? Int) == ffRotation, "stream \(index ?? -1) rotation")
                // Clockwise turn for display: the negated counter-clockwise angle.
                let clockwise = ((-(ffRotation ?? 0)) % 360 + 360) % 360
                #expect(track["rotation"] as? Int == clockwise)
            }
            if type == "audio" {
                #expect(track["sampleRate"] as? Int == (stream["sample_rate"] as? String).flatMap { Int($0) })
                #expect(track["channels"] as? Int == stream["channels"] as? Int)
            }
        }
    }
}
