import TrackHubCLI
import Foundation
import TrackHubCore
import TrackHubProtocol

/// One route a courier drives along: `[lon, lat]` points and their along-route distances.
struct LoadRoute: Sendable {
    var points: [(lon: Double, lat: Double)]
    var cumulative: [Double]

    init(points: [(lon: Double, lat: Double)]) {
        self.points = points
        var total = 0.0
        var cumulative = [0.0]
        for i in 1..<points.count {
            total += Self.distance(points[i - 1], points[i])
            cumulative.append(total)
        }
        self.cumulative = cumulative
    }

    var length: Double { cumulative.last ?? 0 }

    /// The point `metres` along the route (clamped to its ends).
    func point(at metres: Double) -> (lat: Double, lon: Double) {
        let d = min(max(0, metres), length)
        var low = 0
        var high = cumulative.count - 1
        while high - low > 1 {
            let mid = (low + high) / 2
            if cumulative[mid] <= d { low = mid } else { high = mid }
        }
        let span = cumulative[high] - cumulative[low]
        let f = span > 0 ? (d - cumulative[low]) / span : 0
        let a = points[low], b = points[high]
        return (a.lat + (b.lat - a.lat) * f, a.lon + (b.lon - a.lon) * f)
    }

    /// The route's points, for a request body.
    var geoPoints: [GeoPoint] { points.map { GeoPoint(lat: $0.lat, lon: $0.lon) } }

    static func distance(_ a: (lon: Double, lat: Double), _ b: (lon: Double, lat: Double)) -> Double {
        let r = 6_371_008.8
        let p1 = a.lat * .pi / 180, p2 = b.lat * .pi / 180
        let dp = p2 - p1, dl = (b.lon - a.lon) * .pi / 180
        let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * r * asin(min(1, sqrt(h)))
    }
}

/// The routes of a run: LineStrings read from a GeoJSON file (the project's sample data,
/// `planned_routes.geojson`), or synthetic straight roads around Helsinki.
enum RouteBook {
    static func load(path: String?) throws -> [LoadRoute] {
        guard let path else { return synthetic() }
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("--routes: cannot read \(path)") }
        let value: JSONValue
        do { value = try JSONParser(maxDepth: 64).parse(Array(data)) } catch { throw UsageError("--routes: \(path) is not JSON: \(error)") }
        var routes: [LoadRoute] = []
        for feature in value["features"]?.arrayValue ?? [] {
            guard let geometry = feature["geometry"], geometry["type"]?.stringValue == "LineString",
                  let coordinates = geometry["coordinates"]?.arrayValue else { continue }
            let points = coordinates.compactMap { pair -> (lon: Double, lat: Double)? in
                guard let a = pair.arrayValue, a.count >= 2, let lon = a[0].doubleValue, let lat = a[1].doubleValue else { return nil }
                return (lon, lat)
            }
            if points.count >= 2 { routes.append(LoadRoute(points: points)) }
        }
        guard !routes.isEmpty else { throw UsageError("--routes: no LineString in \(path)") }
        return routes
    }

    /// Eight straight 20 km roads leaving central Helsinki in different directions.
    static func synthetic() -> [LoadRoute] {
        (0..<8).map { k in
            let bearing = Double(k) * 45 * .pi / 180
            let start = (lon: 24.9384, lat: 60.1699)
            let points = (0...40).map { i -> (lon: Double, lat: Double) in
                let d = Double(i) * 500
                let dLat = d * cos(bearing) / 111_320
                let dLon = d * sin(bearing) / (111_320 * cos(start.lat * .pi / 180))
                return (start.lon + dLon, start.lat + dLat)
            }
            return LoadRoute(points: points)
        }
    }
}
