import Foundation
import Testing
import TrackHubCore
@testable import TrackHubStore

/// The streaming encoder of stored trip states writes the same JSON values `JSONEncoder` does,
/// whatever shape the value has.
@Suite struct StateEncoderTests {
    /// Both encodings parsed back: equal objects (key order and number spelling aside).
    private func parsed(_ bytes: [UInt8]) throws -> NSObject {
        try #require(JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as? NSObject)
    }

    private func expectSameAsJSONEncoder<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let streamed = try StateEncoder.encode(value)
        let reference = try [UInt8](JSONEncoder().encode(value))
        #expect(try parsed(streamed) == parsed(reference), "\(String(decoding: streamed, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    /// Trips in the states a hub stores: new, animating after fixes, holding, past a waypoint,
    /// arrived, ended, off route.
    static func tripsInEveryState() throws -> [Trip] {
        var trips: [Trip] = [makeTrip("fresh")]
        var moving = makeTrip("moving", waypoints: [])
        _ = drive(&moving, fixes: (0..<6).map { fix(0.0002 * Double($0), ts: t0 + Int64($0) * 1000, seq: Int64($0)) }, now: t0)
        trips.append(moving)
        var holding = makeTrip("holding")
        _ = drive(&holding, fixes: [fix(0.0, ts: t0, seq: 1), fix(0.01, ts: t0 + 200_000, seq: 2)], now: t0)
        trips.append(holding)
        var resumed = holding
        _ = try resumed.proceed(now: t0 + 300_000)
        _ = drive(&resumed, fixes: [fix(0.02, ts: t0 + 400_000, seq: 3)], now: t0 + 400_000)
        trips.append(resumed)
        var ended = resumed
        _ = ended.end(now: t0 + 500_000)
        trips.append(ended)
        var offRoute = makeTrip("off \"route\"\\ \u{1}", waypoints: [])
        _ = drive(&offRoute, fixes: [
            FixInput(lat: 0.001, lon: 0.05, ts: t0, seq: nil, durationMs: nil, speedMps: nil, heading: nil, accuracyM: nil),
            FixInput(lat: 0.002, lon: 0.05, ts: t0 + 1000, seq: 9, durationMs: 500, speedMps: 3, heading: 270, accuracyM: 20),
        ], now: t0)
        trips.append(offRoute)
        let unrouted = try Trip(id: "no-route", route: nil, waypoints: [], destination: GeoPoint(lat: 1, lon: 2), config: TripConfig(), now: t0)
        trips.append(unrouted)
        #expect(holding.status == .holding && ended.status == .ended && moving.status == .moving)
        return trips
    }

    @Test func everyTripStateEncodesAsJSONEncoderWouldHaveIt() throws {
        for trip in try Self.tripsInEveryState() {
            try expectSameAsJSONEncoder(trip)
        }
    }

    @Test func theStoredStateIsTheTripWithoutTheKeysStoredElsewhere() throws {
        for trip in try Self.tripsInEveryState() {
            let stored = try #require(try parsed(SQLiteTripCodec.encodeState(trip)) as? [String: Any])
            var reference = try #require(try parsed([UInt8](JSONEncoder().encode(trip))) as? [String: Any])
            for key in SQLiteTripCodec.skippedKeys { reference[key] = nil }
            #expect(NSDictionary(dictionary: stored) == NSDictionary(dictionary: reference), "trip \(trip.id)")
        }
    }

    /// Shapes `Trip` does not use today: nested containers, arrays of arrays, values that
    /// encode nothing, extreme integers and escapes.
    private struct Shapes: Encodable {
        enum Keys: String, CodingKey { case nested, list, empty, edges, text, none, again }
        struct Nothing: Encodable { func encode(to encoder: any Encoder) throws {} }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            var nested = c.nestedContainer(keyedBy: Keys.self, forKey: .nested)
            try nested.encode([[1, 2], [], [3]], forKey: .list)
            var inner = nested.nestedUnkeyedContainer(forKey: .edges)
            try inner.encode(Int64.min)
            try inner.encode(UInt64.max)
            try inner.encode(-0.5)
            try inner.encodeNil()
            var deeper = inner.nestedContainer(keyedBy: Keys.self)
            try deeper.encode("é\"\\\n\u{7f}", forKey: .text)
            try c.encode(Nothing(), forKey: .empty)
            try c.encodeNil(forKey: .none)
            try c.encode(Optional<Int>.none, forKey: .again)
            // A second request for the top container goes on with the same object.
            var same = encoder.container(keyedBy: Keys.self)
            try same.encode(true, forKey: .text)
        }
    }

    @Test func nestedAndEmptyValuesAreWrittenInPlace() throws {
        let streamed = String(decoding: try StateEncoder.encode(Shapes()), as: UTF8.self)
        #expect(streamed == #"{"nested":{"list":[[1,2],[],[3]],"edges":[-9223372036854775808,18446744073709551615,-0.5,null,{"text":"é\"\\\u000a\#u{7f}"}]},"empty":{},"none":null,"again":null,"text":true}"#)
        try expectSameAsJSONEncoder(Shapes())
    }

    @Test func aNumberJSONCannotHoldIsRefusedNamingItsPlace() throws {
        struct Bad: Encodable { var inner = [["x": Double.nan]] }
        #expect {
            _ = try StateEncoder.encode(Bad())
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["inner", "0", "x"]
        }
    }

    @Test func aContainerWrittenAfterItsObjectClosedIsAnErrorNotBadJSON() throws {
        struct OutOfOrder: Encodable {
            enum Keys: String, CodingKey { case a, b, c }
            func encode(to encoder: any Encoder) throws {
                var top = encoder.container(keyedBy: Keys.self)
                var nested = top.nestedContainer(keyedBy: Keys.self, forKey: .a)
                try top.encode(1, forKey: .b)  // closes `nested`'s object
                try nested.encode(2, forKey: .c)
            }
        }
        #expect(throws: EncodingError.self) { _ = try StateEncoder.encode(OutOfOrder()) }
        // The same, when another object has been opened at the closed one's depth.
        struct Replaced: Encodable {
            enum Keys: String, CodingKey { case a, b, c }
            func encode(to encoder: any Encoder) throws {
                var top = encoder.container(keyedBy: Keys.self)
                var first = top.nestedContainer(keyedBy: Keys.self, forKey: .a)
                _ = top.nestedContainer(keyedBy: Keys.self, forKey: .b)
                try first.encode(2, forKey: .c)
            }
        }
        #expect(throws: EncodingError.self) { _ = try StateEncoder.encode(Replaced()) }
    }

    @Test func aSuperEncoderIsRefusedRatherThanRiskWrongJSON() throws {
        struct WithSuper: Encodable {
            enum Keys: String, CodingKey { case a }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: Keys.self)
                var single = c.superEncoder().singleValueContainer()
                try single.encode(5)
            }
        }
        #expect(throws: EncodingError.self) { _ = try StateEncoder.encode(WithSuper()) }
    }
}
