import TrackHubCore

/// Encoders for the server messages of PROTOCOL section 4 that carry trip state: `frame`,
/// `segment`, `event` and `snapshot`. Each writes the message once into a buffer that starts
/// with `headroom` bytes (libwebsockets' `LWS_PRE`), so the hub can share the same bytes
/// among every subscriber and hand them to `lws_write` without a copy.
///
/// Numbers are rounded for the wire: coordinates to 7 decimals (about 1 cm), `bearing`,
/// `done_m`, `remaining_m` and `distance_m` to 0.1, `progress` to 5 decimals.
public enum ServerMessages {
    /// `frame` `{type, trip, seq, t, lat, lon, bearing, progress, done_m, remaining_m, eta_s, leg, status, jump?}`.
    /// - Parameters:
    ///   - trip: the trip id.
    ///   - seq: the frame's number within the trip in this process, from 1.
    ///   - frame: the marker sampled at the tick (`t` in ms since the epoch).
    ///   - headroom: leading bytes left before the JSON.
    public static func frame(trip: String, seq: Int, _ frame: TripFrame, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 220)
        w.beginObject()
        w.field("type", "frame")
        w.field("trip", trip)
        w.field("seq", seq)
        w.field("t", frame.t)
        w.coordinateField("lat", frame.position.lat)
        w.coordinateField("lon", frame.position.lon)
        w.field("bearing", wireBearing(frame.bearingDeg))
        w.field("progress", frame.progress.map { rounded($0, places: 5) })
        writeStandingFields(&w, doneM: frame.doneM, remainingM: frame.remainingM, etaS: frame.etaS, leg: frame.leg, status: frame.status)
        // PROTOCOL 6.2: only a jump frame carries `jump`.
        if frame.jump { w.field("jump", true) }
        w.endObject()
        return w.finish()
    }

    /// `segment` `{type, trip, seq, t0, duration_ms, path, progress_from, progress_to, done_m,
    /// remaining_m, eta_s, leg, status, jump?}` (`t0` in ms since the epoch, `duration_ms` in ms).
    /// - Parameters:
    ///   - trip: the trip id.
    ///   - seq: the segment's number within the trip in this process, from 1.
    ///   - segment: the animation, with the standing at its target.
    ///   - headroom: leading bytes left before the JSON.
    public static func segment(trip: String, seq: Int, _ segment: TripSegment, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 256 + segment.path.count * 24)
        w.beginObject()
        w.field("type", "segment")
        w.field("trip", trip)
        w.field("seq", seq)
        w.field("t0", segment.t0)
        w.field("duration_ms", segment.durationMs)
        w.key("path")
        writeLine(&w, segment.path)
        w.field("progress_from", segment.progressFrom.map { rounded($0, places: 5) })
        w.field("progress_to", segment.progressTo.map { rounded($0, places: 5) })
        writeStandingFields(
            &w, doneM: segment.doneM, remainingM: segment.remainingM, etaS: segment.etaS, leg: segment.leg, status: segment.status)
        if segment.jump { w.field("jump", true) }
        w.endObject()
        return w.finish()
    }

    /// `event` `{type, trip, n, name, t, lat, lon, ...}`: `index`, `remaining_waypoints`,
    /// `stop` and `stop_name` (PROTOCOL 17) for the waypoint events, `distance_m` (metres) for `off_route`, `reason` (`client` or
    /// `off_route`, PROTOCOL 16) for `rerouted`, `last_fix_t` and `battery` for
    /// `signal_lost`, `gap_ms` for `signal_back`, `battery` for `battery_low` (PROTOCOL 18);
    /// `lat`, `lon` `null` without a marker. The hub stores these bytes and replays them as first sent.
    /// - Parameters:
    ///   - trip: the trip id.
    ///   - event: the event (`t` in ms since the epoch).
    ///   - headroom: leading bytes left before the JSON (0 for the stored copy).
    public static func event(trip: String, _ event: TripEvent, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 160)
        w.beginObject()
        w.field("type", "event")
        w.field("trip", trip)
        w.field("n", event.n)
        w.field("name", event.kind.name)
        w.field("t", event.t)
        w.coordinateField("lat", event.position?.lat)
        w.coordinateField("lon", event.position?.lon)
        switch event.kind {
        case .waypointReached(let index, let remaining), .waypointResumed(let index, let remaining):
            w.field("index", index)
            w.field("remaining_waypoints", remaining)
            // PROTOCOL 17: the stop's id and name, null when not given.
            if let stop = event.stopID { w.field("stop", stop) } else { w.nullField("stop") }
            if let name = event.stopName { w.field("stop_name", name) } else { w.nullField("stop_name") }
        case .offRoute(let distance):
            w.field("distance_m", rounded(distance, places: 1))
        case .rerouted(let reason):
            w.field("reason", (reason ?? .client).rawValue)
        case .signalLost(let lastFixT, let battery):
            w.field("last_fix_t", lastFixT)
            w.field("battery", battery)
        case .signalBack(let gapMs):
            w.field("gap_ms", gapMs)
        case .batteryLow(let battery):
            w.field("battery", battery)
        default:
            break
        }
        w.endObject()
        return w.finish()
    }

    /// A stored `event` as a share link's replay sends it (PROTOCOL 13): the same message with
    /// `lat` and `lon` `null`, so a replay is not a way to the trail a customer never sees,
    /// and `battery` `null` where the event has one (PROTOCOL 18: a share token sees none).
    /// Nil for bytes that are not a JSON object (never stored by the hub: dropped, not sent).
    public static func eventWithoutPosition(_ stored: [UInt8]) -> [UInt8]? {
        guard case .object(var object)? = try? JSONParser().parse(stored) else { return nil }
        object["lat"] = .null
        object["lon"] = .null
        if object["battery"] != nil { object["battery"] = .null }
        var w = JSONWriter(headroom: 0, capacity: stored.count + 16)
        w.value(.object(object))
        return w.finish()
    }

    /// A stored `event` as a share link's live subscription gets it (PROTOCOL 18: a share
    /// token sees `battery` `null`): the same message with `battery` `null`. Nil when the
    /// event has no battery to hide (`signal_lost` and `battery_low` have one): send the
    /// stored bytes as they are.
    public static func eventWithoutBattery(_ stored: [UInt8]) -> [UInt8]? {
        guard contains(stored, Self.batteryKey), !contains(stored, Self.nullBattery),
            case .object(var object)? = try? JSONParser().parse(stored), object["battery"] != nil
        else { return nil }
        object["battery"] = .null
        var w = JSONWriter(headroom: 0, capacity: stored.count)
        w.value(.object(object))
        return w.finish()
    }

    private static let batteryKey = Array(#""battery":"#.utf8)
    private static let nullBattery = Array(#""battery":null"#.utf8)

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }

    /// `snapshot` `{type, re?, trip, status, rider, config, route, waypoints, destination,
    /// position, bearing, progress, done_m, remaining_m, eta_s, leg, trail, last_event, recovered?}`.
    /// - Parameters:
    ///   - view: the trip at the moment shown.
    ///   - re: the `subscribe`'s id, if it had one.
    ///   - recovered: for a `subscribe` with `since_event` (PROTOCOL 7); nil: left out.
    ///   - headroom: leading bytes left before the JSON.
    public static func snapshot(_ view: TripView, re: MessageID?, recovered: Bool?, headroom: Int = 0) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 1024)
        w.beginObject()
        w.field("type", "snapshot")
        w.reField(re)
        view.writeFields(to: &w)
        if let recovered { w.field("recovered", recovered) }
        w.endObject()
        return w.finish()
    }

    /// The trip's standing that ends both a `frame` and a `segment` (at the target for a segment).
    @inline(__always)
    private static func writeStandingFields(
        _ w: inout JSONWriter, doneM: Double?, remainingM: Double?, etaS: Int?, leg: Int, status: TripStatus
    ) {
        w.field("done_m", doneM.map { rounded($0, places: 1) })
        w.field("remaining_m", remainingM.map { rounded($0, places: 1) })
        w.field("eta_s", etaS)
        w.field("leg", leg)
        w.field("status", status.rawValue)
    }

    /// Writes a line as `[[lon, lat], ...]` (GeoJSON order, 7 decimals).
    static func writeLine(_ w: inout JSONWriter, _ points: [GeoPoint]) {
        w.beginArray()
        for point in points { w.lonLat(lon: point.lon, lat: point.lat) }
        w.endArray()
    }

    /// Writes a point as `{"lat":…,"lon":…}`, or `null`.
    static func writePoint(_ w: inout JSONWriter, _ point: GeoPoint?) {
        guard let point else { w.null(); return }
        w.beginObject()
        w.coordinateField("lat", point.lat)
        w.coordinateField("lon", point.lon)
        w.endObject()
    }

    /// A bearing for the wire: to 0.1°, in [0, 360) as PROTOCOL 4 says (359.96° rounds to
    /// 360.0, which is north: written 0).
    @inline(__always)
    static func wireBearing(_ degrees: Double) -> Double {
        let value = rounded(degrees, places: 1)
        return value >= 360 ? 0 : value
    }

    /// Rounds for the wire: sub-decimetre precision is noise in a GPS tracker, and shorter
    /// numbers are fewer bytes per delivery. `places` is 1 or 5 (else: whole numbers).
    @inline(__always)
    static func rounded(_ value: Double, places: Int) -> Double {
        let scale: Double
        switch places {
        case 1: scale = 10
        case 5: scale = 100_000
        default: scale = 1
        }
        return (value * scale).rounded() / scale
    }
}
