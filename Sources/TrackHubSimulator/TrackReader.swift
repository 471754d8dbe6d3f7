import Foundation
import TrackHubProtocol

/// Reads a recorded track: GPX (`<trkpt lat lon><time>`, or `<rtept>`/`<wpt>` with times), or
/// CSV with a header row naming `ts`, `lat` and `lon` columns (`ts` in ms since the epoch).
///
/// Points are kept in file order; a point whose time is not after the previous one's is
/// dropped (a hub would refuse it as `out_of_order` or `duplicate`).
public enum TrackReader {
    /// Reads `path`, choosing the format by content (`<` starts GPX).
    /// - Throws: `SimulatorError.badTrack` for an unreadable file, a missing column, a bad
    ///   number or time, or fewer than two usable points.
    public static func read(path: String) throws(SimulatorError) -> RecordedTrack {
        guard let data = FileManager.default.contents(atPath: path) else { throw .badTrack("cannot read \(path)") }
        let text = String(decoding: data, as: UTF8.self)
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return try parse(text, name: name)
    }

    /// Parses GPX or CSV text.
    public static func parse(_ text: String, name: String) throws(SimulatorError) -> RecordedTrack {
        let trimmed = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        let raw = trimmed.hasPrefix("<") ? try parseGPX(String(trimmed)) : try parseCSV(String(trimmed))
        var points: [RecordedTrack.Point] = []
        for point in raw where points.last.map({ point.ts > $0.ts }) ?? true { points.append(point) }
        guard points.count >= 2 else { throw .badTrack("\(name): fewer than two points with increasing times") }
        return RecordedTrack(name: name, points: points)
    }

    /// CSV with a header row; columns found by name (`ts`, `lat`, `lon`), others ignored.
    static func parseCSV(_ text: String) throws(SimulatorError) -> [RecordedTrack.Point] {
        var lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !lines.isEmpty else { throw .badTrack("empty CSV") }
        let header = lines.removeFirst().split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"")).lowercased()
        }
        guard let tsColumn = header.firstIndex(of: "ts"), let latColumn = header.firstIndex(of: "lat"),
              let lonColumn = header.firstIndex(of: "lon") else {
            throw .badTrack("the CSV header must name ts, lat and lon columns")
        }
        var points: [RecordedTrack.Point] = []
        for (number, line) in lines.enumerated() {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > max(tsColumn, latColumn, lonColumn),
                  let ts = Int64(cells[tsColumn]) ?? Double(cells[tsColumn]).flatMap({ $0.isFinite ? Int64($0) : nil }),
                  let lat = Double(cells[latColumn]), let lon = Double(cells[lonColumn]),
                  (-90...90).contains(lat), (-180...180).contains(lon) else {
                throw .badTrack("CSV row \(number + 2) is not ts,lat,lon")
            }
            points.append(RecordedTrack.Point(ts: ts, lat: lat, lon: lon))
        }
        return points
    }

    /// GPX 1.0/1.1: every `trkpt` (else `rtept`, else `wpt`) with a `<time>`.
    static func parseGPX(_ text: String) throws(SimulatorError) -> [RecordedTrack.Point] {
        for tag in ["trkpt", "rtept", "wpt"] {
            let points = try gpxPoints(text, tag: tag)
            if !points.isEmpty { return points }
        }
        throw .badTrack("no GPX points with a <time>")
    }

    private static func gpxPoints(_ text: String, tag: String) throws(SimulatorError) -> [RecordedTrack.Point] {
        var points: [RecordedTrack.Point] = []
        var rest = text[...]
        while let open = rest.range(of: "<\(tag)") {
            let after = rest[open.upperBound...]
            guard let first = after.first, first == " " || first == "\t" || first == "\n" || first == "\r" || first == ">" || first == "/" else {
                rest = after
                continue
            }
            guard let tagEnd = after.firstIndex(of: ">") else { break }
            let attributes = after[..<tagEnd]
            let selfClosing = attributes.hasSuffix("/")
            var body: Substring = ""
            if selfClosing {
                rest = after[after.index(after: tagEnd)...]
            } else if let close = after.range(of: "</\(tag)>") {
                body = after[after.index(after: tagEnd)..<close.lowerBound]
                rest = after[close.upperBound...]
            } else {
                throw .badTrack("unclosed <\(tag)>")
            }
            guard let lat = attribute("lat", in: attributes).flatMap(Double.init),
                  let lon = attribute("lon", in: attributes).flatMap(Double.init),
                  (-90...90).contains(lat), (-180...180).contains(lon) else {
                throw .badTrack("a <\(tag)> without valid lat and lon")
            }
            guard let timeText = element("time", in: body) else { continue }
            guard let ts = parseISO8601(timeText) else { throw .badTrack("bad <time> \(timeText)") }
            points.append(RecordedTrack.Point(ts: ts, lat: lat, lon: lon))
        }
        return points
    }

    private static func attribute(_ name: String, in text: Substring) -> String? {
        for quote in ["\"", "'"] {
            if let start = text.range(of: " \(name)=\(quote)") ?? text.range(of: "\n\(name)=\(quote)") ?? text.range(of: "\t\(name)=\(quote)") {
                let value = text[start.upperBound...]
                if let end = value.range(of: quote) { return String(value[..<end.lowerBound]) }
            }
        }
        return nil
    }

    private static func element(_ name: String, in text: Substring) -> String? {
        guard let open = text.range(of: "<\(name)>"), let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex) else { return nil }
        return text[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `2020-12-18T06:15:50Z`, with optional fraction and `±hh:mm` offset; ms since the epoch.
    static func parseISO8601(_ text: String) -> Int64? {
        let chars = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= chars.count else { return nil }
            var value = 0
            for c in chars[from..<(from + count)] {
                guard c >= 48 && c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              chars.count >= 19, (1...12).contains(month), (1...31).contains(day) else { return nil }
        var i = 19
        var millis = 0
        if i < chars.count && chars[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 100
            while i < chars.count, chars[i] >= 48 && chars[i] <= 57 {
                millis += Int(chars[i] - 48) * scale
                scale /= 10
                i += 1
            }
        }
        var offsetMinutes = 0
        if i < chars.count {
            switch chars[i] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"): break
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard let h = number(i + 1, 2) else { return nil }
                let m = number(i + 4, 2) ?? number(i + 3, 2) ?? 0
                offsetMinutes = (h * 60 + m) * (chars[i] == UInt8(ascii: "+") ? 1 : -1)
            default: return nil
            }
        }
        let days = DeviceTimestamp.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return seconds * 1000 + Int64(millis)
    }
}
