/// The text of the trail exports (PROTOCOL 14), one fix at a time so that a long trail can
/// be streamed: GPX 1.1 (one `trk`, one `trkseg`, a `trkpt` per fix with its `time`) and CSV
/// (`ts,lat,lon,reason,altitude,battery`; altitude and battery empty where a fix had none).
public enum TrailExport {
    /// One fix as the exports need it.
    public struct Point: Sendable {
        /// When the device took the fix, ms since the epoch (GPX `time`, CSV `ts`).
        public var ts: Int64
        /// Latitude in degrees, written with at most 7 decimals.
        public var lat: Double
        /// Longitude in degrees, written with at most 7 decimals.
        public var lon: Double
        /// The ack reason of a fix that was stored but not applied; nil when applied.
        public var reason: String?
        /// Metres, as a phone app reported it; nil when none.
        public var altitude: Double?
        /// Percent, as a phone app reported it; nil when none.
        public var battery: Double?
        /// One stored fix; `reason`, `altitude` and `battery` nil where the fix had none.
        public init(ts: Int64, lat: Double, lon: Double, reason: String?, altitude: Double? = nil, battery: Double? = nil) {
            self.ts = ts
            self.lat = lat
            self.lon = lon
            self.reason = reason
            self.altitude = altitude
            self.battery = battery
        }
    }

    /// The CSV's first row, CRLF-terminated like every row.
    public static let csvHeader = "ts,lat,lon,reason,altitude,battery\r\n"

    /// One CSV row, CRLF-terminated: numbers by `fixed7`, empty fields for what the fix lacks.
    public static func csvRow(_ point: Point) -> String {
        "\(point.ts),\(fixed7(point.lat)),\(fixed7(point.lon)),\(point.reason ?? ""),\(point.altitude.map(fixed7) ?? ""),\(point.battery.map(fixed7) ?? "")\r\n"
    }

    /// Everything of the GPX document before the first `trkpt`: the `gpx` element with `server`
    /// (the hub's name) as `creator`, and a `trk` named `trip`; both XML-escaped.
    public static func gpxHead(trip: String, server: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="\(xmlEscaped(server))" xmlns="http://www.topografix.com/GPX/1/1">
        <trk><name>\(xmlEscaped(trip))</name><trkseg>

        """
    }

    /// One `trkpt` line with its `time`; a stored-but-refused fix carries its reason as `type`.
    public static func gpxPoint(_ point: Point) -> String {
        var text = "<trkpt lat=\"\(fixed7(point.lat))\" lon=\"\(fixed7(point.lon))\"><time>\(iso8601(millis: point.ts))</time>"
        if let reason = point.reason { text += "<type>\(xmlEscaped(reason))</type>" }
        return text + "</trkpt>\n"
    }

    /// Closes what `gpxHead` opened; written after the last point, even for an empty trail.
    public static let gpxTail = "</trkseg></trk>\n</gpx>\n"

    /// `2026-12-01T10:00:00.123Z` (UTC, milliseconds).
    public static func iso8601(millis: Int64) -> String {
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let ms = Int(millis - seconds * 1000)
        var days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        // Civil from days (H. Hinnant): the proleptic Gregorian date of a day count.
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return "\(pad(Int(year), 4))-\(pad(Int(month), 2))-\(pad(Int(day), 2))T"
            + "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(ms, 3))Z"
    }

    /// A decimal with at most 7 places, trailing zeros trimmed, never an exponent (xsd:decimal).
    public static func fixed7(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let scaled = Int64((abs(value) * 10_000_000).rounded())
        let whole = scaled / 10_000_000
        var fraction = String(scaled % 10_000_000)
        fraction = String(repeating: "0", count: 7 - fraction.count) + fraction
        while fraction.last == "0" { fraction.removeLast() }
        let sign = value < 0 && scaled != 0 ? "-" : ""
        return fraction.isEmpty ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
    }

    static func xmlEscaped(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(c)
            }
        }
        return out
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
