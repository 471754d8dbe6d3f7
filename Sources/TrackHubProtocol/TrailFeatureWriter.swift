import TrackHubCore

/// Writes the body of `GET /v1/trips/{id}/trail` (PROTOCOL 5) in parts, so that a long trail
/// can be streamed page by page:
/// `{"type":"Feature","geometry":{"type":"LineString","coordinates":[[lon,lat],...]}|null,
/// "properties":{"trip":…,"ts":[...],"seq":[...],"reason":[...],"speed_mps":[...],
/// "altitude":[...],"battery":[...]}}` (the last three `null` where a fix had none).
///
/// The Feature holds four arrays over the same fixes, and a JSON writer cannot go back, so
/// the caller goes over the fixes once per array: `append` every fix (oldest first), then
/// `endArray()`, and again for the next array (`phase` says which), until `phase` is `.done`.
/// `takeWritten()` hands over what is written so far. The parts joined are the bytes a
/// whole-trail encoding gives.
public struct TrailFeatureWriter: Sendable {
    /// The array being written.
    public enum Phase: Sendable, Equatable {
        /// `geometry.coordinates`: `[lon, lat]` pairs (7 decimals).
        case coordinates
        /// `properties.ts`: ms since the epoch.
        case ts
        /// `properties.seq`: the fixes' `seq`, `null` where none.
        case seq
        /// `properties.reason`: the ack reasons, `null` where applied.
        case reason
        /// `properties.speed_mps`, `properties.altitude` (m), `properties.battery` (percent):
        /// what a fix reported, `null` where it had none (PROTOCOL 11).
        case speedMps, altitude, battery
        /// The Feature is complete.
        case done
    }

    /// The array `append` writes into now.
    public private(set) var phase: Phase
    private var writer: JSONWriter
    private let trip: String

    /// Starts the Feature of `trip`'s trail. With fewer than two fixes in all (`hasLine`
    /// false) `geometry` is `null` and the first array is `ts`.
    /// - Parameter capacity: bytes to reserve for each part (e.g. one page of fixes).
    public init(trip: String, hasLine: Bool, capacity: Int = 64 * 1024) {
        self.trip = trip
        writer = JSONWriter(headroom: 0, capacity: capacity)
        writer.beginObject()
        writer.field("type", "Feature")
        writer.key("geometry")
        if hasLine {
            writer.beginObject()
            writer.field("type", "LineString")
            writer.key("coordinates")
            writer.beginArray()
            phase = .coordinates
        } else {
            writer.null()
            phase = .ts
            beginProperties()
        }
    }

    /// Writes one fix's element of the current array; `refusal` is why it was not applied
    /// (nil: applied). Nothing once `done`.
    public mutating func append(_ fix: FixInput, refusal: FixRefusal?) {
        switch phase {
        case .coordinates: writer.lonLat(lon: fix.lon, lat: fix.lat)
        case .ts: writer.int(fix.ts)
        case .seq: if let seq = fix.seq { writer.int(seq) } else { writer.null() }
        case .reason: if let refusal { writer.string(refusal.rawValue) } else { writer.null() }
        case .speedMps: optional(fix.speedMps)
        case .altitude: optional(fix.altitudeM)
        case .battery: optional(fix.batteryPercent)
        case .done: break
        }
    }

    /// Closes the current array and opens the next one (after `reason`: ends the Feature).
    public mutating func endArray() {
        guard phase != .done else { return }
        writer.endArray()
        switch phase {
        case .coordinates:
            writer.endObject()
            phase = .ts
            beginProperties()
        case .ts:
            writer.key("seq")
            writer.beginArray()
            phase = .seq
        case .seq:
            writer.key("reason")
            writer.beginArray()
            phase = .reason
        case .reason:
            writer.key("speed_mps")
            writer.beginArray()
            phase = .speedMps
        case .speedMps:
            writer.key("altitude")
            writer.beginArray()
            phase = .altitude
        case .altitude:
            writer.key("battery")
            writer.beginArray()
            phase = .battery
        case .battery:
            writer.endObject()
            writer.endObject()
            phase = .done
        case .done:
            break
        }
    }

    private mutating func optional(_ value: Double?) {
        if let value, value.isFinite { writer.double(value) } else { writer.null() }
    }

    /// Hands over the bytes written since the last call.
    public mutating func takeWritten() -> [UInt8] {
        writer.takeWritten()
    }

    private mutating func beginProperties() {
        writer.key("properties")
        writer.beginObject()
        writer.field("trip", trip)
        writer.key("ts")
        writer.beginArray()
    }
}
