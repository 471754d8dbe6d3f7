import Foundation
import Testing
@testable import TrackHubCore
@testable import TrackHubStore

/// The hand-written stored state (`Trip.storedStateJSON`) is the JSON value `Trip`'s `Codable`
/// conformance writes through the store's `StateEncoder` less the keys stored elsewhere (the
/// same members and values; `50` for `50.0`), and reads back as the same trip, for trips in
/// every state and for one with every optional value set; and every
/// stored property of `Trip` and of the structs inside it is written (a property added to one
/// of them and not to the hand-written encoding fails here, with its path).
@Suite struct StoredStateJSONTests {
    /// A trip with every optional property set and every path of the animation possible.
    static func tripWithEverythingSet(path: Animation.Path) throws -> Trip {
        var trip = makeTrip("full \"one\"")
        trip.waypoints[0].id = "door-1"
        trip.waypoints[0].name = "Flat 2, \"back\" door"
        trip.waypoints[0].dwellS = 30
        trip.waypoints[0].visited = true
        trip.config.autoReroute = true
        trip.config.mode = .bicycle
        trip.arrivedAt = t0 + 1
        trip.endedAt = t0 + 2
        trip.holdingPosition = 0
        trip.lastApplied = .init(ts: t0, point: GeoPoint(lat: 0.001, lon: -0.5))
        trip.previousAppliedTs = t0 - 1000
        trip.speedReference = .init(ts: t0, point: GeoPoint(lat: 0.001, lon: 0), alongM: 111.25)
        trip.speedMps = 12.3456789
        trip.animation = Animation(path: path, startT: t0, durationMs: 1000)
        trip.lastFramePosition = GeoPoint(lat: 1e-7, lon: -179.9999999)
        trip.recentFixTimes = [.init(ts: t0, receivedAt: t0 + 5), .init(ts: t0 + 1000, receivedAt: t0 + 1003)]
        trip.nextFrameIsJump = true
        trip.frameDue = false
        trip.routeOrigin = .router
        trip.routerDurationS = 321.5
        trip.offRouteFixes = 2
        trip.lastTargetAlongM = 100.25
        var signal = CourierSignal(firstArrival: t0)
        signal.battery = 14
        signal.lostSilence = 60_000
        signal.batteryLowSent = true
        signal.arrivals.append(t0 + 1000)
        trip.signal = signal
        trip.holdingSince = t0 + 3
        trip.onRouteAlongM = 1.5
        trip.restingBearing = 359.99
        trip.framedThrough = t0 + 4
        trip.needsCheck = true
        trip.isOffRoute = true
        trip.lastEventNumber = 7
        trip.visitedCount = 1
        return trip
    }

    static let paths: [Animation.Path] = [
        .alongRoute(fromM: 0, toM: 2222.5),
        .straight(from: GeoPoint(lat: 1, lon: 2), to: GeoPoint(lat: -1, lon: -2)),
        .straightToRoute(from: GeoPoint(lat: 0.5, lon: 0.25), toM: 10),
        .viaRoute(from: GeoPoint(lat: 0.5, lon: 0.25), entryM: 3.5, toM: 1e-5),
    ]

    /// The JSON value of `bytes` (numbers compare by value: `50` is `50.0`).
    static func parsed(_ bytes: [UInt8]) throws -> NSObject {
        try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? NSObject)
    }

    /// The hand-written state is the Codable one's value, and loads as the same trip.
    static func expectWrittenAsCodable(_ trip: Trip, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let byHand = try trip.storedStateJSON()
        let reference = try StateEncoder.encode(trip, skipping: SQLiteTripCodec.skippedKeys)
        #expect(try parsed(byHand) == parsed(reference), "trip \(trip.id): \(String(decoding: byHand, as: UTF8.self))", sourceLocation: sourceLocation)
        // The seen keys come from the stored fixes, not the state: compare the rest.
        let loaded = try SQLiteTripCodec.decode(state: byHand, route: try SQLiteTripCodec.encodeRoute(trip.route), seenSeqs: [], seenTimestamps: [])
        #expect(try withoutSeenKeys(loaded) == withoutSeenKeys(trip), "trip \(trip.id)", sourceLocation: sourceLocation)
    }

    static func withoutSeenKeys(_ trip: Trip) throws -> NSDictionary {
        var object = try #require(try parsed(Array(canonical(trip))) as? [String: Any])
        object["seenSeqs"] = nil
        object["seenTimestamps"] = nil
        return NSDictionary(dictionary: object)
    }

    @Test func everyTripStateIsWrittenByHandAsItsCodableEncoding() throws {
        for trip in try StateEncoderTests.tripsInEveryState() {
            try Self.expectWrittenAsCodable(trip)
        }
    }

    @Test(arguments: paths)
    func aTripWithEveryOptionalSetIsWrittenByHandAsItsCodableEncoding(_ path: Animation.Path) throws {
        try Self.expectWrittenAsCodable(try Self.tripWithEverythingSet(path: path))
    }

    @Test func everyStoredPropertyIsWritten() throws {
        let trip = try Self.tripWithEverythingSet(path: Self.paths[3])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(trip.storedStateJSON())) as? [String: Any])
        let missing = Self.unwritten(trip, json, path: "Trip", skipping: SQLiteTripCodec.skippedKeys)
        #expect(missing.isEmpty, "not in Trip.storedStateJSON (or nil in tripWithEverythingSet: set it there): \(missing)")
    }

    /// A NaN would be written as `null`, which `Trip`'s decoding refuses at the next start: the
    /// encoding (so the store's commit) fails instead.
    @Test func aNumberJSONCannotHoldIsRefused() throws {
        var trip = makeTrip()
        trip.speedMps = .nan
        #expect(throws: EncodingError.self) { try trip.storedStateJSON() }
        trip.speedMps = 3
        trip.restingBearing = .infinity
        #expect(throws: EncodingError.self) { try trip.storedStateJSON() }
    }

    /// The paths of the stored properties of `value` (through structs, optionals and arrays)
    /// that are not keys of the JSON written for it.
    static func unwritten(_ value: Any, _ json: Any, path: String, skipping: Set<String> = []) -> [String] {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct:
            guard let object = json as? [String: Any] else { return ["\(path) (not an object)"] }
            var missing: [String] = []
            for child in mirror.children {
                guard let label = child.label, !skipping.contains(label) else { continue }
                guard let written = object[label] else {
                    missing.append("\(path).\(label)")
                    continue
                }
                missing += unwritten(child.value, written, path: "\(path).\(label)")
            }
            return missing
        case .optional:
            guard let wrapped = mirror.children.first?.value else { return ["\(path) (nil)"] }
            return unwritten(wrapped, json, path: path)
        case .collection:
            guard let array = json as? [Any] else { return ["\(path) (not an array)"] }
            return zip(mirror.children, array).enumerated().flatMap { unwritten($0.element.0.value, $0.element.1, path: "\(path)[\($0.offset)]") }
        default:
            return []  // numbers, strings, enums: byte equality above holds their spelling
        }
    }
}
