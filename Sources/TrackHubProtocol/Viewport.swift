/// A normalised map viewport (PROTOCOL section 3, `viewport`): longitudes within ±180
/// (`west > east` crosses the antimeridian), latitudes within ±`Viewport.maxLatitude`,
/// and an integer zoom 0–22.
public struct Viewport: Sendable, Hashable {
    /// Western edge, degrees in [-180, 180].
    public var west: Double
    /// Southern edge, degrees within ±85.05112878.
    public var south: Double
    /// Eastern edge, degrees in [-180, 180].
    public var east: Double
    /// Northern edge, degrees within ±85.05112878.
    public var north: Double
    /// The zoom level, 0–22.
    public var zoom: Int
    /// True when the box is the whole world (given 360° or wider).
    public var isWorld: Bool

    /// The latitude limit of Web Mercator tiles.
    public static let maxLatitude = 85.05112878
    /// The highest zoom accepted.
    public static let maxZoom = 22

    /// A viewport with these (already normalised) edges.
    public init(west: Double, south: Double, east: Double, north: Double, zoom: Int, isWorld: Bool = false) {
        self.west = west
        self.south = south
        self.east = east
        self.north = north
        self.zoom = zoom
        self.isWorld = isWorld
    }

    /// The whole world at `zoom`: `[-180, -85.05112878, 180, 85.05112878]`.
    public static func world(zoom: Int) -> Viewport {
        Viewport(west: -180, south: -maxLatitude, east: 180, north: maxLatitude, zoom: zoom, isWorld: true)
    }

    /// True when the box crosses the antimeridian (`west > east`).
    public var crossesAntimeridian: Bool { west > east }

    /// `[west, south, east, north]`.
    public var bbox: [Double] { [west, south, east, north] }

    /// True when the point lies inside the box (edges included).
    public func contains(lat: Double, lon: Double) -> Bool {
        guard lat >= south && lat <= north else { return false }
        if isWorld { return true }
        if west <= east { return lon >= west && lon <= east }
        return lon >= west || lon <= east
    }

    /// Floors `zoom` and checks it is 0–22; else `bad_request` naming `field`.
    public static func normalizeZoom(_ zoom: Double, field: String = "zoom") throws(ProtocolError) -> Int {
        let floored = zoom.rounded(.down)
        guard zoom.isFinite, floored >= 0, floored <= Double(maxZoom) else {
            throw .badRequest("\(field) must be a number from 0 to \(maxZoom)")
        }
        return Int(floored)
    }

    /// Normalises a box `[west, south, east, north]` as PROTOCOL section 3 says: longitudes
    /// wrapped into ±180, a box 360° or wider is the whole world, latitudes clamped to
    /// ±85.05112878; `south > north` (or a non-finite edge) is `bad_request` naming `field`.
    public static func normalize(
        west: Double, south: Double, east: Double, north: Double, zoom: Int, field: String = "bbox"
    ) throws(ProtocolError) -> Viewport {
        guard west.isFinite, south.isFinite, east.isFinite, north.isFinite else {
            throw .badRequest("\(field) must be 4 finite numbers [west, south, east, north]")
        }
        guard south <= north else {
            throw .badRequest("\(field) south (\(JSONNumber(south))) must not be greater than north (\(JSONNumber(north)))")
        }
        if east - west >= 360 { return world(zoom: zoom) }
        let clampedSouth = min(max(south, -maxLatitude), maxLatitude)
        let clampedNorth = min(max(north, -maxLatitude), maxLatitude)
        var wrappedWest = wrap(west)
        if wrappedWest == 180 { wrappedWest = -180 }
        var wrappedEast = wrap(east)
        if wrappedEast == -180 && east != west { wrappedEast = 180 }
        return Viewport(
            west: wrappedWest, south: clampedSouth, east: wrappedEast, north: clampedNorth, zoom: zoom, isWorld: false)
    }

    /// Decodes the `bbox` and `zoom` of a `viewport` message or a query; nil for `bbox: null`.
    static func decode(bbox: JSONValue?, zoom: JSONValue?) throws(ProtocolError) -> Viewport? {
        guard let bbox else {
            throw .badRequest("bbox is required: [west, south, east, north] or null")
        }
        if bbox.isNull { return nil }
        guard case .array(let edges) = bbox, edges.count == 4 else {
            throw .badRequest("bbox must be an array of 4 numbers [west, south, east, north] or null")
        }
        var values: [Double] = []
        values.reserveCapacity(4)
        for edge in edges {
            guard case .number(let number) = edge, number.value.isFinite else {
                throw .badRequest("bbox must be 4 finite numbers [west, south, east, north]")
            }
            values.append(number.value)
        }
        guard let zoom else { throw Fields.missing("zoom") }
        guard case .number(let zoomNumber) = zoom else { throw .badRequest("zoom must be a number from 0 to \(maxZoom)") }
        let level = try normalizeZoom(zoomNumber.value)
        return try normalize(west: values[0], south: values[1], east: values[2], north: values[3], zoom: level)
    }

    /// Wraps a longitude into [-180, 180].
    private static func wrap(_ lon: Double) -> Double {
        if lon >= -180 && lon <= 180 { return lon }
        var wrapped = (lon + 180).truncatingRemainder(dividingBy: 360)
        if wrapped < 0 { wrapped += 360 }
        return wrapped - 180
    }
}
