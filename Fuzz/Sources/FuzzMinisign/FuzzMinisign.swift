import Bundles

/// minisign's public keys and signatures, as read from trusted-keys/ and MANIFEST.minisig. The
/// input is split at the first NUL byte: before it, parsed as a key; after it (or all of it when
/// there is none), parsed as a signature; when both parse, the signature is verified over the key
/// text (it fails, cleanly: the fuzzer cannot forge Ed25519).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let split = bytes.firstIndex(of: 0)
    // The reader decodes both files leniently (String(decoding:)), so any bytes get through.
    let keyText = String(decoding: bytes[..<(split ?? size)], as: UTF8.self)
    let signatureText = split.map { String(decoding: bytes[($0 + 1)...], as: UTF8.self) } ?? keyText
    let key = try? MinisignPublicKey(text: keyText, origin: "operator.pub")
    do {
        let signature = try MinisignSignature(text: signatureText, origin: "MANIFEST.minisig")
        _ = signature.keyID
        _ = signature.trustedComment
        if let key {
            do {
                try signature.verify(Array(keyText.utf8), with: key, messageName: "MANIFEST")
            } catch {
                _ = error.description
            }
        }
    } catch {
        _ = error.description
    }
    return 0
}
