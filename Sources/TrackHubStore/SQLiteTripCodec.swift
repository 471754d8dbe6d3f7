import Foundation
import TrackHubCore

/// How the SQLite store writes a `Trip` (its whole state machine, via its `Codable`
/// conformance) and reads it back.
///
/// A trip's state is written once per transaction that touched it, so this is on the hot
/// path. Two parts of `Trip` grow with its life and are left out of the stored state:
/// - `seenSeqs` / `seenTimestamps` (up to 100 000 keys each): every fix the trip judged new
///   is in the `fixes` table, in judging order (its `id`), so on load they are rebuilt from
///   there, exactly as `judge` filled them;
/// - `route` (up to `--max-route-points`): stored in its own column, only when it changed.
/// The rest is written by hand (`Trip.storedStateJSON`): the JSON value `StateEncoder`, a small
/// streaming `Codable` encoder, writes when it skips those keys, about four times faster
/// (BENCHMARKS.md, "The fix path"). Loading splices them back in and decodes with
/// `JSONDecoder`, so the format is plain JSON of `Trip`'s own coding keys.
enum SQLiteTripCodec {
    /// Top-level coding keys of `Trip` that are stored elsewhere.
    static let skippedKeys: Set<String> = ["route", "seenSeqs", "seenTimestamps"]
    /// The capacity `Trip` gives its seen-key sets (`SeenFixKeys.defaultCapacity`).
    static let seenCapacity = 100_000

    /// The trip's state without the skipped keys, as a JSON object.
    static func encodeState(_ trip: Trip) throws -> [UInt8] {
        try trip.storedStateJSON()
    }

    /// The route as its points (Route's own coding), or nil.
    static func encodeRoute(_ route: Route?) throws -> [UInt8]? {
        guard let route else { return nil }
        return try StateEncoder.encode(route, capacity: route.points.count * 40 + 16)
    }

    /// Rebuilds a trip: the stored state, its route, and the seen keys of its stored fixes
    /// (seqs and timestamps in judging order).
    static func decode(state: [UInt8], route: [UInt8]?, seenSeqs: [Int64], seenTimestamps: [Int64]) throws -> Trip {
        guard state.last == UInt8(ascii: "}") else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "stored trip state is not a JSON object"))
        }
        var json = state
        json.removeLast()
        json.reserveCapacity(json.count + (route?.count ?? 0) + (seenSeqs.count + seenTimestamps.count) * 14 + 128)
        let isEmptyObject = json.count == 1
        func appendKeys(_ name: String, _ keys: [Int64]) {
            json.append(contentsOf: Array(",\"\(name)\":{\"capacity\":\(seenCapacity),\"keys\":[".utf8))
            for (i, key) in keys.enumerated() {
                if i > 0 { json.append(UInt8(ascii: ",")) }
                json.append(contentsOf: Array(String(key).utf8))
            }
            json.append(contentsOf: Array("]}".utf8))
        }
        appendKeys("seenSeqs", seenSeqs)
        appendKeys("seenTimestamps", seenTimestamps)
        if let route {
            json.append(contentsOf: Array(",\"route\":".utf8))
            json.append(contentsOf: route)
        }
        json.append(UInt8(ascii: "}"))
        if isEmptyObject { json.remove(at: 1) }  // "{," → "{"
        return try JSONDecoder().decode(Trip.self, from: Data(json))
    }
}
