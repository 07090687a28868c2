/// Captured frames in the device's sample format, converted to what the meter (Float) and the file
/// writer (16-bit samples, or 24-bit samples in 32-bit words) take. Integer conversions that keep
/// the bits do so; narrowing rounds to nearest and clips, as libswresample does.
enum CapturedSamples {
    /// `count` samples from `bytes` as floats in −1…1.
    static func floats(_ bytes: UnsafeRawPointer, count: Int, format: DeviceSampleFormat, into output: UnsafeMutablePointer<Float>) {
        switch format {
        case .s16:
            let input = bytes.assumingMemoryBound(to: Int16.self)
            for index in 0..<count { output[index] = Float(Int16(littleEndian: input[index])) * (1 / 32_768) }
        case .s32:
            let input = bytes.assumingMemoryBound(to: Int32.self)
            for index in 0..<count { output[index] = Float(Int32(littleEndian: input[index])) * (1 / 2_147_483_648) }
        case .float32:
            let input = bytes.assumingMemoryBound(to: Float.self)
            for index in 0..<count {
                let sample = input[index]
                output[index] = sample.isNaN ? 0 : sample
            }
        }
    }

    /// `count` samples from `bytes` as 16-bit samples (the caller passes S16 through without this).
    static func int16s(_ bytes: UnsafeRawPointer, count: Int, format: DeviceSampleFormat, into output: UnsafeMutablePointer<Int16>) {
        switch format {
        case .s16:
            output.update(from: bytes.assumingMemoryBound(to: Int16.self), count: count)
        case .s32:
            let input = bytes.assumingMemoryBound(to: Int32.self)
            for index in 0..<count {
                let rounded = (Int64(Int32(littleEndian: input[index])) + 0x8000) >> 16
                output[index] = Int16(clamping: rounded)
            }
        case .float32:
            let input = bytes.assumingMemoryBound(to: Float.self)
            for index in 0..<count {
                let scaled = (input[index] * 32_768).rounded(.toNearestOrEven)
                output[index] = scaled.isNaN ? 0 : Int16(min(32_767, max(-32_768, scaled)))
            }
        }
    }

    /// `count` samples from `bytes` as 32-bit words whose upper 24 bits are the sample.
    static func int32s(_ bytes: UnsafeRawPointer, count: Int, format: DeviceSampleFormat, into output: UnsafeMutablePointer<Int32>) {
        switch format {
        case .s16:
            let input = bytes.assumingMemoryBound(to: Int16.self)
            for index in 0..<count { output[index] = Int32(Int16(littleEndian: input[index])) << 16 }
        case .s32:
            let input = bytes.assumingMemoryBound(to: Int32.self)
            for index in 0..<count {
                // Round to 24 bits (the writer keeps the upper 24).
                let rounded = (Int64(Int32(littleEndian: input[index])) + 0x80) & ~0xFF
                output[index] = Int32(clamping: rounded)
            }
        case .float32:
            let input = bytes.assumingMemoryBound(to: Float.self)
            for index in 0..<count {
                let scaled = (Double(input[index]) * 8_388_608).rounded(.toNearestOrEven)
                output[index] = scaled.isNaN ? 0 : Int32(min(8_388_607, max(-8_388_608, scaled))) << 8
            }
        }
    }
}
