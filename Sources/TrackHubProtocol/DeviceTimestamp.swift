/// The timestamp forms phone apps send (PROTOCOL 11), parsed to ms since the epoch: Unix
/// seconds (a fraction allowed), milliseconds when above 10¹², ISO 8601 with an offset
/// (`2016-01-27T18:55:47Z`, `...47.123+02:00`, `+0200`), or `YYYY-MM-DD HH:MM:SS` in UTC
/// (a `+` in a query string has already become the space). Pure; nil for anything else.
public enum DeviceTimestamp {
    /// Numbers above this are milliseconds, below it seconds.
    public static let millisecondsThreshold: Double = 1e12

    /// Parses any of the forms above (spaces around it ignored) to ms since the epoch; nil when
    /// it is none of them or out of range. A number must be finite and not negative.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingASCIISpaces
        if let number = JSONParser.parseNumber(trimmed), number.value.isFinite, number.value >= 0 {
            return epochValue(number.value)
        }
        return parseCalendar(Array(trimmed.utf8))
    }

    /// A numeric time: seconds, or milliseconds above the threshold.
    public static func epochValue(_ value: Double) -> Int64? {
        let ms = value > millisecondsThreshold ? value : value * 1000
        guard ms.isFinite, ms < 9.2e18 else { return nil }
        return Int64(ms.rounded())
    }

    /// `YYYY-MM-DD` then `T` or a space, `HH:MM:SS`, an optional fraction, then `Z`, an
    /// offset `±HH:MM` / `±HHMM` / `±HH`, or (only after a space) nothing: UTC.
    static func parseCalendar(_ b: [UInt8]) -> Int64? {
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard i + count <= b.count else { return nil }
            var value = 0
            for k in 0..<count {
                let c = b[i + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            i += count
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2) else { return nil }
        guard i < b.count, b[i] == 0x54 || b[i] == 0x74 || b[i] == 0x20 else { return nil }
        let spaced = b[i] == 0x20
        i += 1
        guard let hour = digits(2), expect(0x3A), let minute = digits(2), expect(0x3A), let second = digits(2) else { return nil }
        var millis = 0
        if i < b.count, b[i] == 0x2E || b[i] == 0x2C {
            i += 1
            var scale = 100
            var any = false
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                millis += Int(b[i] - 0x30) * scale
                scale /= 10
                any = true
                i += 1
            }
            guard any else { return nil }
        }
        var offsetMinutes = 0
        if i == b.count {
            guard spaced else { return nil }  // ISO 8601 needs its offset; the SQL-like form is UTC
        } else if b[i] == 0x5A || b[i] == 0x7A {
            i += 1
        } else if b[i] == 0x2B || b[i] == 0x2D {
            let sign = b[i] == 0x2D ? -1 : 1
            i += 1
            guard let hours = digits(2) else { return nil }
            var minutes = 0
            if i < b.count {
                _ = expect(0x3A)
                guard let m = digits(2) else { return nil }
                minutes = m
            }
            guard hours <= 23, minutes <= 59 else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return seconds * 1000 + Int64(millis)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's civil algorithm).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

extension String {
    fileprivate var trimmingASCIISpaces: String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
