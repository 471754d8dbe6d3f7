import Foundation
import Testing

@testable import TrackHubCore

// Fixtures and invariant checks shared by the Fleet*Tests files.

// The fleet fixtures draw from the core's SplitMix64 through the standard library's
// `Double.random(in:using:)` (not `SplitMix64.uniform`): that is how they always drew, so every
// seed still makes the same fleets and viewports.

extension SplitMix64 {
    /// A standard normal deviate (Box–Muller) drawn as the fleet fixtures always drew it.
    mutating func standardNormal() -> Double {
        let u = max(Double.random(in: 0..<1, using: &self), 1e-300)
        let v = Double.random(in: 0..<1, using: &self)
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }
}

/// The mercator latitude limit callers clamp viewports to.
let fleetMercatorLimit = 85.05112878

/// Kinds of synthetic fleets.
enum FleetShape: CaseIterable {
    /// Gaussian blobs around a few cities, with some riders on the very same spot.
    case cities
    /// Uniform over the mercator world.
    case world
    /// Blobs straddling the antimeridian (Fiji, Chukotka, the dateline at the equator).
    case antimeridian
}

/// A seeded synthetic fleet of `size` riders.
func makeFleet(seed: UInt64, size: Int, shape: FleetShape) -> [FleetMember] {
    var rng = SplitMix64(seed: seed)
    let statuses = ["moving", "holding", "off_route", "pending"]
    let centres: [(lat: Double, lon: Double)]
    switch shape {
    case .cities: centres = [(60.17, 24.94), (38.72, -9.14), (35.68, 139.65), (-33.87, 151.21), (40.71, -74.0)]
    case .world: centres = []
    case .antimeridian: centres = [(-17.8, 179.9), (65.0, -179.8), (0.0, 180.0), (-40.0, -179.99)]
    }
    var members: [FleetMember] = []
    members.reserveCapacity(size)
    for i in 0..<size {
        var lat: Double
        var lon: Double
        if centres.isEmpty {
            lat = Double.random(in: -84...84, using: &rng)
            lon = Double.random(in: -180...180, using: &rng)
        } else if i > 0 && i % 17 == 0 {
            // Same spot as an earlier rider.
            let other = members[Int(rng.next() % UInt64(members.count))]
            lat = other.position.lat
            lon = other.position.lon
        } else {
            let c = centres[Int(rng.next() % UInt64(centres.count))]
            let spread = [0.002, 0.02, 0.3, 2.0][Int(rng.next() % 4)]
            lat = min(max(c.lat + rng.standardNormal() * spread, -89), 89)
            lon = c.lon + rng.standardNormal() * spread
            if lon > 180 { lon -= 360 }
            if lon < -180 { lon += 360 }
        }
        members.append(FleetMember(
            id: "t\(seed)-\(i)", position: GeoPoint(lat: lat, lon: lon),
            status: statuses[i % statuses.count], bearing: Double(i % 360)))
    }
    return members
}

/// A random viewport `[west, south, east, north]`, latitudes clamped as callers do;
/// about a third cross the antimeridian.
func randomBBox(_ rng: inout SplitMix64, near members: [FleetMember]) -> [Double] {
    let width = [0.01, 0.2, 3, 40, 200][Int(rng.next() % 5)]
    let height = min(width, 150)
    var centreLon = Double.random(in: -180...180, using: &rng)
    var centreLat = Double.random(in: -80...80, using: &rng)
    if !members.isEmpty && rng.next() % 2 == 0 {
        let m = members[Int(rng.next() % UInt64(members.count))]
        centreLon = m.position.lon
        centreLat = m.position.lat
    }
    if rng.next() % 3 == 0 { centreLon = rng.next() % 2 == 0 ? 179.9 : -179.9 }
    var west = centreLon - width / 2
    var east = centreLon + width / 2
    if west < -180 { west += 360 }
    if east > 180 { east -= 360 }
    let south = max(centreLat - height / 2, -fleetMercatorLimit)
    let north = min(centreLat + height / 2, fleetMercatorLimit)
    return [west, south, east, north]
}

/// Whether a rider lies in a viewport, by PROTOCOL section 8 (latitudes at the
/// mercator limit reach to the pole).
func viewportContains(_ bbox: [Double], _ p: GeoPoint) -> Bool {
    let south = bbox[1] <= -fleetMercatorLimit ? -90 : bbox[1]
    let north = bbox[3] >= fleetMercatorLimit ? 90 : bbox[3]
    guard p.lat >= south && p.lat <= north else { return false }
    return bbox[0] <= bbox[2] ? (p.lon >= bbox[0] && p.lon <= bbox[2]) : (p.lon >= bbox[0] || p.lon <= bbox[2])
}

/// Whether an item's bounds (a rider: its position) intersect a viewport.
func viewportIntersects(_ bbox: [Double], _ item: FleetItem) -> Bool {
    let b = item.bounds ?? [item.lon, item.lat, item.lon, item.lat]
    let south = bbox[1] <= -fleetMercatorLimit ? -90 : bbox[1]
    let north = bbox[3] >= fleetMercatorLimit ? 90 : bbox[3]
    guard b[1] <= north && b[3] >= south else { return false }
    func overlaps(_ w: Double, _ e: Double) -> Bool { b[0] <= e && b[2] >= w }
    return bbox[0] <= bbox[2] ? overlaps(bbox[0], bbox[2]) : (overlaps(bbox[0], 180) || overlaps(-180, bbox[2]))
}

let fleetWorld: [Double] = [-180, -fleetMercatorLimit, 180, fleetMercatorLimit]

/// Queries `bbox` at `zoom` and checks every invariant of PROTOCOL section 8 that one
/// answer must hold; returns the items with their member ids.
@discardableResult
func checkViewport(
    _ index: FleetIndex, _ members: [FleetMember], _ bbox: [Double], zoom: Int,
    sourceLocation: SourceLocation = #_sourceLocation
) -> [(item: FleetItem, members: [String])] {
    let items = index.clusters(west: bbox[0], south: bbox[1], east: bbox[2], north: bbox[3], zoom: zoom)
    let byID = Dictionary(members.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    var seen: [String: Int] = [:]
    var result: [(item: FleetItem, members: [String])] = []
    var itemIDs = Set<String>()
    for item in items {
        #expect(itemIDs.insert(item.id).inserted, "item \(item.id) returned twice", sourceLocation: sourceLocation)
        #expect(viewportIntersects(bbox, item), "item \(item.id) does not reach into \(bbox)", sourceLocation: sourceLocation)
        guard let ids = index.memberIDs(of: item) else {
            Issue.record("no members for \(item.id)", sourceLocation: sourceLocation)
            continue
        }
        #expect(ids.count == item.count, sourceLocation: sourceLocation)
        if item.count == 1 {
            #expect(item.trip == item.id && item.status != nil && item.bearing != nil && item.bounds == nil
                && item.expansionZoom == nil, sourceLocation: sourceLocation)
            if let m = byID[item.id] {
                #expect(m.position.lat == item.lat && m.position.lon == item.lon, sourceLocation: sourceLocation)
            }
        } else {
            #expect(item.id.hasPrefix("#") && item.trip == nil && item.status == nil, sourceLocation: sourceLocation)
            let b = item.bounds ?? []
            #expect(b.count == 4, sourceLocation: sourceLocation)
            if let e = item.expansionZoom {
                #expect(e > min(zoom, index.options.maxZoom) && e <= index.options.maxZoom + 1, sourceLocation: sourceLocation)
            } else {
                Issue.record("cluster \(item.id) without expansion_zoom", sourceLocation: sourceLocation)
            }
            for id in ids {
                guard let p = byID[id]?.position, b.count == 4 else { continue }
                #expect(p.lon >= b[0] && p.lon <= b[2] && p.lat >= b[1] && p.lat <= b[3],
                    "member \(id) at \(p) outside bounds \(b) of \(item.id)", sourceLocation: sourceLocation)
            }
        }
        for id in ids { seen[id, default: 0] += 1 }
        result.append((item, ids))
    }
    // No rider is in two items; every rider inside the box is in exactly one.
    for (id, n) in seen where n > 1 {
        Issue.record("rider \(id) counted \(n) times at zoom \(zoom) in \(bbox)", sourceLocation: sourceLocation)
    }
    for m in members where m.position.isValid && viewportContains(bbox, m.position) && seen[m.id] != 1 {
        Issue.record("rider \(m.id) at \(m.position) inside \(bbox) counted \(seen[m.id] ?? 0) times at zoom \(zoom)",
            sourceLocation: sourceLocation)
    }
    let inside = members.filter { $0.position.isValid && viewportContains(bbox, $0.position) }.count
    #expect(items.reduce(0) { $0 + $1.count } >= inside, sourceLocation: sourceLocation)
    return result
}

/// Checks that at every zoom the world answer adds up to `total`, and that every
/// sampled viewport answer holds the section 8 invariants and is exactly the world
/// answer's items that reach into it.
func checkFleet(_ members: [FleetMember], seed: UInt64, boxesPerZoom: Int, sourceLocation: SourceLocation = #_sourceLocation) {
    let index = FleetIndex.build(members: members)
    #expect(index.total == members.filter { $0.position.isValid }.count, sourceLocation: sourceLocation)
    var rng = SplitMix64(seed: seed ^ 0x5eed)
    for zoom in 0...17 {
        let world = checkViewport(index, members, fleetWorld, zoom: zoom, sourceLocation: sourceLocation)
        #expect(world.reduce(0) { $0 + $1.item.count } == index.total, "zoom \(zoom)", sourceLocation: sourceLocation)
        for _ in 0..<boxesPerZoom {
            let bbox = randomBBox(&rng, near: members)
            let answer = checkViewport(index, members, bbox, zoom: zoom, sourceLocation: sourceLocation)
            let expected = Set(world.filter { viewportIntersects(bbox, $0.item) }.map(\.item.id))
            #expect(Set(answer.map(\.item.id)) == expected, "zoom \(zoom) bbox \(bbox)", sourceLocation: sourceLocation)
        }
    }
}

/// Reads `(id, lat, lon)` rows from a CSV whose id, lat and lon are in the columns
/// given (ids are made trip-id safe and unique by the row number).
func readFleetCSV(_ url: URL, idColumn: Int, latColumn: Int, lonColumn: Int) -> [FleetMember] {
    guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
    var members: [FleetMember] = []
    for (row, line) in text.split(separator: "\n").dropFirst().enumerated() {
        let fields = line.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count > max(idColumn, latColumn, lonColumn),
            let lat = Double(String(fields[latColumn])), let lon = Double(String(fields[lonColumn]))
        else { continue }
        let safe = String(fields[idColumn]).map { c -> Character in
            c.isLetter || c.isNumber || c == "." || c == "_" || c == ":" || c == "-" ? c : "_"
        }
        members.append(FleetMember(
            id: String(safe.prefix(50)) + "-\(row)", position: GeoPoint(lat: lat, lon: lon),
            status: "moving", bearing: 0))
    }
    return members
}
