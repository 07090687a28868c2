import ScheduleFuzzing

/// Schedule files in TOML, through reading, validation and a day of programme.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    ScheduleFuzzing.run(data, size, format: .toml)
    return 0
}
