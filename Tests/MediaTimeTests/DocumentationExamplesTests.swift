import MediaTime
import Testing

@Suite("AVFoundation documentation examples")
struct DocumentationExamplesTests {
    @Test("1/2 is half a second and describes itself")
    func half() {
        let time = MediaTime(value: 1, timescale: 2)
        #expect(time.seconds == 0.5)
        #expect(time.description == "1/2 = 0.500 s")
    }

    @Test("5/1 is five seconds")
    func five() {
        #expect(MediaTime(value: 5, timescale: 1).seconds == 5)
        #expect(MediaTime(value: 5, timescale: 1) == MediaTime(value: 3000, timescale: 600))
    }

    @Test("1/44100 is one audio sample")
    func oneSample() {
        let sample = MediaTime(value: 1, timescale: 44_100)
        #expect(sample.seconds == 1.0 / 44_100)
        #expect(sample * 44_100 == MediaTime(value: 1, timescale: 1))
    }

    @Test("441000/44100 equals 10 seconds")
    func tenSeconds() {
        #expect(MediaTime(value: 441_000, timescale: 44_100) == MediaTime(value: 10, timescale: 1))
        #expect(MediaTime(value: 441_000, timescale: 44_100).seconds == 10)
    }

    @Test("90/30 equals 3 seconds")
    func threeSeconds() {
        #expect(MediaTime(value: 90, timescale: 30) == MediaTime(value: 3, timescale: 1))
    }
}
