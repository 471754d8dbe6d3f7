import Testing
import TrackHubCore
@testable import TrackHubProtocol

@Suite struct TrailFeatureWriterTests {
    /// The Feature written whole, as the hub wrote it before it streamed (the reference).
    static func whole(trip: String, _ fixes: [(FixInput, FixRefusal?)]) -> String {
        let coordinates = fixes.map { "[\($0.0.lon),\($0.0.lat)]" }.joined(separator: ",")
        let geometry = fixes.count >= 2 ? #"{"type":"LineString","coordinates":[\#(coordinates)]}"# : "null"
        let ts = fixes.map { String($0.0.ts) }.joined(separator: ",")
        let seq = fixes.map { $0.0.seq.map(String.init) ?? "null" }.joined(separator: ",")
        let reason = fixes.map { $0.1.map { "\"\($0.rawValue)\"" } ?? "null" }.joined(separator: ",")
        func optional(_ value: (FixInput) -> Double?) -> String { fixes.map { value($0.0).map { $0 == $0.rounded() ? "\(Int64($0))" : "\($0)" } ?? "null" }.joined(separator: ",") }
        let speed = optional(\.speedMps)
        let altitude = optional(\.altitudeM)
        let battery = optional(\.batteryPercent)
        return #"{"type":"Feature","geometry":\#(geometry),"properties":{"trip":"\#(trip)","ts":[\#(ts)],"seq":[\#(seq)],"reason":[\#(reason)],"speed_mps":[\#(speed)],"altitude":[\#(altitude)],"battery":[\#(battery)]}}"#
    }

    static func fixes(_ count: Int) -> [(FixInput, FixRefusal?)] {
        // Binary fractions, so `description` spells them as the writer does.
        let lats: [Double] = [38.5, 38.75, 38.125, 38.375, 38.625, 38.875, 38.0625, 38.1875, 38.3125]
        var out: [(FixInput, FixRefusal?)] = []
        for i in 0..<count {
            let seq: Int64? = i % 3 == 0 ? nil : Int64(i)
            var fix = FixInput(lat: lats[i], lon: -9.25, ts: 1_700_000_000_000 + Int64(i), seq: seq)
            if i % 2 == 0 {
                fix.altitudeM = 224.5
                fix.batteryPercent = 79
                fix.speedMps = 2.25
            }
            let refusal: FixRefusal? = i % 4 == 1 ? .outOfOrder : nil
            out.append((fix, refusal))
        }
        return out
    }

    /// Written in pages of `pageSize`, one pass per array, the parts join up to the whole.
    static func streamed(trip: String, _ fixes: [(FixInput, FixRefusal?)], pageSize: Int) -> String {
        var writer = TrailFeatureWriter(trip: trip, hasLine: fixes.count >= 2, capacity: 64)
        var body: [UInt8] = []
        while writer.phase != .done {
            var start = 0
            repeat {
                for (fix, refusal) in fixes[start..<min(fixes.count, start + pageSize)] { writer.append(fix, refusal: refusal) }
                start += pageSize
                body += writer.takeWritten()
            } while start < fixes.count
            writer.endArray()
        }
        body += writer.takeWritten()
        return text(body)
    }

    @Test func streamedTrailJoinsUpToTheWholeFeature() {
        for count in [0, 1, 2, 5, 9] {
            for pageSize in [2, 3, 100] {
                #expect(Self.streamed(trip: "T:1", Self.fixes(count), pageSize: pageSize) == Self.whole(trip: "T:1", Self.fixes(count)),
                        "\(count) fixes in pages of \(pageSize)")
            }
        }
    }

    @Test func trailOfFewerThanTwoFixesHasNoGeometry() throws {
        let parsed = try parse(Self.streamed(trip: "T", Self.fixes(1), pageSize: 10))
        #expect(parsed["geometry"] == .null)
        #expect(parsed["properties"]?["ts"] == [1_700_000_000_000])
    }
}
