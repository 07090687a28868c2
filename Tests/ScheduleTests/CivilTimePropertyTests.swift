import PropertyBased
import Testing
@testable import Scheduling

@Suite("Calendar and zone arithmetic properties")
struct CivilTimePropertyTests {
    @Test("Days since the epoch round-trip through a date, and weekdays advance by one a day")
    func dateRoundTrip() async {
        await propertyCheck(input: Gen.int(in: -1_000_000...3_000_000)) { days in
            let date = LocalDate(daysSinceEpoch: days)
            #expect(date.daysSinceEpoch == days)
            #expect(LocalDate(year: date.year, month: date.month, day: date.day) == date)
            #expect(LocalDate(parsing: date.description) == date || date.year < 0 || date.year > 9999)
            let next = date.adding(days: 1)
            #expect(next.weekday.rawValue == (date.weekday.rawValue + 1) % 7)
        }
    }

    @Test("A wall time converts to an instant that shows it again (or a later one, in a gap)")
    func zoneRoundTrip() async throws {
        let zones = try ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"].map { try ZoneInfo(identifier: $0) }
        await propertyCheck(input: Gen.int64(in: 0...4_102_444_800), Gen.int(in: 0...3)) { seconds, zoneIndex in
            let zone = zones[zoneIndex]
            let local = LocalDateTime(localSeconds: seconds)
            let converted = zone.instant(for: local)
            switch zone.instantCount(for: local) {
            case 1, 2: #expect(zone.localDateTime(at: converted) == local)
            default: #expect(zone.localDateTime(at: converted) > local)  // skipped: moved later
            }
            // And every instant shows a wall time that maps back to an instant no later than it.
            let instant = UTCInstant(secondsSinceEpoch: seconds)
            #expect(zone.instant(for: zone.localDateTime(at: instant)) <= instant)
        }
    }
}
