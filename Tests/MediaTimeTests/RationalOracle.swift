import MediaTime
import PropertyBased

/// An oracle independent of MediaTime's 128-bit cross-multiplication: compares
/// a/b with c/d (b, d > 0) by integer parts, then by the reciprocals of the
/// remainders (the continued-fraction expansion), in plain Int64.
func rationalCompare(_ a: Int64, _ b: Int64, _ c: Int64, _ d: Int64) -> Int {
    func floorDivide(_ n: Int64, _ m: Int64) -> (Int64, Int64) {
        var q = n / m, r = n % m
        if r < 0 { q -= 1; r += m }
        return (q, r)
    }
    let (qa, ra) = floorDivide(a, b)
    let (qc, rc) = floorDivide(c, d)
    if qa != qc { return qa < qc ? -1 : 1 }
    if ra == 0 && rc == 0 { return 0 }
    if ra == 0 { return -1 }
    if rc == 0 { return 1 }
    // ra/b < rc/d  ⇔  b/ra > d/rc
    return -rationalCompare(b, ra, d, rc)
}

/// Timescales seen in media, mixed with arbitrary ones.
let commonTimescales: [Int32] = [1, 2, 24, 25, 30, 60, 600, 1000, 1001, 30000, 44100, 48000, 90000, 1_000_000, 1_000_000_000]

let timescales = zip(Gen.int(in: 0...29), Gen.int32(in: 1...Int32.max)).map { pick, random -> Int32 in
    pick < commonTimescales.count ? commonTimescales[pick] : (pick < 25 ? random % 100_000 + 1 : random)
}

/// Numeric times with values anywhere in Int64.
let anyNumericTimes = zip(Gen.int64(), timescales).map { MediaTime(value: $0, timescale: $1) }

/// Numeric times far from overflow (|value| < 2^40).
let moderateTimes = zip(Gen.int64(in: -(1 << 40)...(1 << 40)), timescales).map { MediaTime(value: $0, timescale: $1) }

/// Numeric and special times.
let allTimes = zip(Gen.int(in: 0...19), Gen.int64(), timescales).map { kind, value, timescale -> MediaTime in
    switch kind {
    case 0: return .invalid
    case 1: return .indefinite
    case 2: return .positiveInfinity
    case 3: return .negativeInfinity
    default: return MediaTime(value: value, timescale: timescale)
    }
}
