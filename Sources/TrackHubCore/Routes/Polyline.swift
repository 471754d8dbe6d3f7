/// A malformed encoded polyline: `offset` is the byte (UTF-8) offset where decoding failed.
public struct PolylineError: Error, Equatable, Sendable {
    /// Byte offset into the string's UTF-8 where decoding failed.
    public var offset: Int

    /// An error at this UTF-8 offset.
    public init(offset: Int) { self.offset = offset }
}

/// Google's encoded polyline algorithm format, precision 5 (1e-5 degrees, about 1.1 m).
public enum Polyline {
    /// Encodes points (rounded to 1e-5 degrees) as Google's polyline string.
    public static func encode(_ points: [GeoPoint]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(points.count * 8)
        var prevLat = 0, prevLon = 0
        for p in points {
            let lat = Int((p.lat * 1e5).rounded()), lon = Int((p.lon * 1e5).rounded())
            appendValue(lat - prevLat, to: &bytes)
            appendValue(lon - prevLon, to: &bytes)
            prevLat = lat
            prevLon = lon
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func appendValue(_ value: Int, to bytes: inout [UInt8]) {
        var v = value < 0 ? ~(value << 1) : (value << 1)
        while v >= 0x20 {
            bytes.append(UInt8((0x20 | (v & 0x1f)) + 63))
            v >>= 5
        }
        bytes.append(UInt8(v + 63))
    }

    /// Decodes a Google polyline string (precision 5).
    /// - Throws: `PolylineError` when a byte is outside `?`…`~`, a value is cut short, a value
    ///   would overflow, a latitude has no longitude, or a point falls outside lat ±90 / lon ±180.
    public static func decode(_ s: String) throws(PolylineError) -> [GeoPoint] {
        let bytes = Array(s.utf8)
        var points: [GeoPoint] = []
        var i = 0
        var lat = 0, lon = 0
        func next() throws(PolylineError) -> Int {
            var result = 0, shift = 0
            while true {
                guard i < bytes.count else { throw PolylineError(offset: i) }
                let b = Int(bytes[i])
                guard b >= 63 && b <= 126, shift <= 30 else { throw PolylineError(offset: i) }
                let chunk = b - 63
                result |= (chunk & 0x1f) << shift
                shift += 5
                i += 1
                if chunk < 0x20 { break }
            }
            return (result & 1) != 0 ? ~(result >> 1) : (result >> 1)
        }
        while i < bytes.count {
            let start = i
            lat += try next()
            guard i < bytes.count else { throw PolylineError(offset: i) }
            lon += try next()
            let p = GeoPoint(lat: Double(lat) / 1e5, lon: Double(lon) / 1e5)
            guard p.isValid else { throw PolylineError(offset: start) }
            points.append(p)
        }
        return points
    }
}
