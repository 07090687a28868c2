import Foundation
import Testing
@testable import Scheduling

@Suite("Time zones from TZif files")
struct ZoneInfoTests {
    static let zones = ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "America/Sao_Paulo",
                        "Europe/London", "Pacific/Chatham", "Africa/Casablanca", "America/St_Johns", "UTC"]

    @Test("Offsets match Python's zoneinfo at 3000 random instants from 1950 to 2100, past the tables into the POSIX rule")
    func offsetsMatchZoneinfo() throws {
        var rng = SeededGenerator(seed: 42)
        var instants: [Int64] = (0..<3000).map { _ in Int64.random(in: -631_152_000...4_102_444_800, using: &rng) }
        // Around each 2026 transition in Berlin and New York, to the second.
        for t: Int64 in [1_774_746_000, 1_792_890_000, 1_772_953_200, 1_793_512_800] {
            instants += [t - 1, t, t + 1]
        }
        var locals: [LocalDateTime] = []
        for _ in 0..<600 {
            let local = LocalDateTime(localSeconds: Int64.random(in: 946_684_800...2_524_608_000, using: &rng) / 1800 * 1800)
            locals.append(local)
        }
        // The skipped and repeated hours of 2026 in Berlin and New York.
        for text in ["2026-03-29T02:30:00", "2026-10-25T02:30:00", "2026-03-08T02:30:00", "2026-11-01T01:30:00",
                     "2026-03-29T02:00:00", "2026-10-25T03:00:00", "2026-03-08T03:00:00", "2026-11-01T02:00:00"] {
            locals.append(LocalDateTime(localSeconds: instant(text + "Z").secondsSinceEpoch))
        }
        let request: [String: Any] = ["zones": Self.zones, "instants": instants, "locals": locals.map(\.description)]
        let output = try runPython(script: packageRoot + "/scripts/zone_reference.py", input: try JSONSerialization.data(withJSONObject: request))
        let reply = try #require(try JSONSerialization.jsonObject(with: output) as? [String: [String: [Int]]])
        for name in Self.zones {
            let zone = try ZoneInfo(identifier: name)
            let expectedOffsets = try #require(reply["offsets"]?[name])
            let expectedInstants = try #require(reply["instants"]?[name])
            var mismatches = 0
            for (index, t) in instants.enumerated() where Int(zone.offset(atUTC: t)) != expectedOffsets[index] {
                mismatches += 1
                if mismatches < 5 { Issue.record("\(name) at \(t): \(zone.offset(atUTC: t)) != \(expectedOffsets[index])") }
            }
            for (index, local) in locals.enumerated() where zone.instant(for: local).secondsSinceEpoch != Int64(expectedInstants[index]) {
                mismatches += 1
                if mismatches < 5 { Issue.record("\(name) local \(local): \(zone.instant(for: local)) != \(expectedInstants[index])") }
            }
            #expect(mismatches == 0, "\(name)")
        }
    }

    @Test("The POSIX footer rule gives Berlin's 2090 transitions")
    func footerRule() throws {
        let berlin = try ZoneInfo(identifier: "Europe/Berlin")
        // Last Sunday of March 2090 is the 26th; clocks go forward at 01:00 UTC.
        #expect(berlin.offset(atUTC: instant("2090-03-26T00:59:59Z").secondsSinceEpoch) == 3600)
        #expect(berlin.offset(atUTC: instant("2090-03-26T01:00:00Z").secondsSinceEpoch) == 7200)
        #expect(berlin.abbreviation(at: instant("2090-07-01T00:00:00Z")) == "CEST")
    }

    @Test("Wall times in the skipped hour move forward; repeated ones take the first instant unless asked")
    func gapsAndFolds() throws {
        let berlin = try ZoneInfo(identifier: "Europe/Berlin")
        let skipped = LocalDateTime(date: date("2026-03-29"), time: LocalTime(hour: 2, minute: 30)!)
        #expect(berlin.instantCount(for: skipped) == 0)
        #expect(berlin.instant(for: skipped) == instant("2026-03-29T01:30:00Z"))  // 03:30 CEST
        let repeated = LocalDateTime(date: date("2026-10-25"), time: LocalTime(hour: 2, minute: 30)!)
        #expect(berlin.instantCount(for: repeated) == 2)
        #expect(berlin.instant(for: repeated) == instant("2026-10-25T00:30:00Z"))
        #expect(berlin.instant(for: repeated, repeated: .later) == instant("2026-10-25T01:30:00Z"))
    }

    @Test("Unknown and malicious zone names are rejected with a reason")
    func badNames() {
        #expect(throws: ZoneInfo.LoadError.self) { try ZoneInfo(identifier: "Europe/Berlln") }
        #expect(throws: ZoneInfo.LoadError.invalidName("../../etc/passwd")) { try ZoneInfo(identifier: "../../etc/passwd") }
        #expect(throws: ZoneInfo.LoadError.self) { try ZoneInfo(identifier: "Bad", tzif: Array("TZif2 but short".utf8)) }
    }
}
