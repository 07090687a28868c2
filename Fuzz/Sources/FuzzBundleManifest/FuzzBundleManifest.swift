import Bundles

/// A bundle's MANIFEST, as the importer reads it from a stick: parsed, and when it parses,
/// written back (`text`) and parsed again to the same entries.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let (manifest, problems) = BundleManifest.parse(bytes, origin: "MANIFEST")
    precondition((manifest == nil) != problems.isEmpty, "a manifest and problems, or neither")
    for problem in problems { _ = problem.description }
    if let manifest {
        _ = manifest.totalSize
        let again = BundleManifest.parse(Array(manifest.text.utf8), origin: "MANIFEST")
        precondition(again.manifest?.entries.map(\.path) == manifest.entries.map(\.path), "the manifest's text does not read back")
    }
    return 0
}
