import Config

/// /etc/vitrine/vitrine.toml: what `vitrine validate --config` and `vitrine play --config` read.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // ConfigurationReader.read refuses text that is not UTF-8 before parsing.
    guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) else { return 0 }
    let path = "/etc/vitrine/vitrine.toml"
    let result = ConfigurationReader.parse(text: text, path: path)
    precondition(result.configuration != nil || !result.diagnostics.isEmpty, "rejected without a diagnostic")
    for diagnostic in result.diagnostics {
        precondition(diagnostic.location.file == path, "a diagnostic names another file: \(diagnostic)")
        _ = diagnostic.description
    }
    return 0
}
