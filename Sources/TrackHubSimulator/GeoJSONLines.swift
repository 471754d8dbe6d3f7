import Foundation
import TrackHubCore
import TrackHubProtocol

/// One LineString feature of a GeoJSON FeatureCollection: its points and its properties.
struct GeoJSONLine: Sendable {
    var points: [GeoPoint]
    var properties: JSONObject
}

/// Reads the LineString features of a GeoJSON FeatureCollection (other geometries are skipped).
enum GeoJSONLines {
    /// - Throws: `SimulatorError.badSampleData` when the file cannot be read or is not a
    ///   FeatureCollection.
    static func load(path: String) throws(SimulatorError) -> [GeoJSONLine] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .badSampleData("cannot read \(path)")
        }
        let root: JSONValue
        do { root = try JSONParser(maxDepth: 64).parse(Array(data)) } catch {
            throw .badSampleData("\(path): \(error)")
        }
        guard let features = root["features"]?.arrayValue else {
            throw .badSampleData("\(path): not a GeoJSON FeatureCollection")
        }
        var lines: [GeoJSONLine] = []
        for feature in features {
            guard let geometry = feature["geometry"], geometry["type"]?.stringValue == "LineString",
                  let coordinates = geometry["coordinates"]?.arrayValue else { continue }
            var points: [GeoPoint] = []
            points.reserveCapacity(coordinates.count)
            for pair in coordinates {
                guard let lon = pair.arrayValue?.first?.doubleValue, let lat = pair.arrayValue?.dropFirst().first?.doubleValue else { continue }
                points.append(GeoPoint(lat: lat, lon: lon))
            }
            guard points.count >= 2 else { continue }
            lines.append(GeoJSONLine(points: points, properties: feature["properties"]?.objectValue ?? JSONObject()))
        }
        return lines
    }
}
