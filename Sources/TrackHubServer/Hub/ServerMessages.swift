import TrackHubCore
import TrackHubProtocol
import TrackHubStore

/// Encodes the server messages of PROTOCOL section 4 that carry trip state. Each function
/// writes once into a buffer with lws headroom; the hub shares the result among subscribers.
enum ServerMessages {
    static let headroom = OutboundMessage.headroom

    /// `frame` (PROTOCOL 4).
    static func frame(trip: String, seq: Int, _ f: TripFrame, slot: Int) -> OutboundMessage {
        var w = JSONWriter(headroom: headroom, capacity: 220)
        w.beginObject()
        w.field("type", "frame")
        w.field("trip", trip)
        w.field("seq", seq)
        w.field("t", f.t)
        w.coordinateField("lat", f.position.lat)
        w.coordinateField("lon", f.position.lon)
        w.field("bearing", rounded(f.bearingDeg, places: 1))
        w.field("progress", f.progress.map { rounded($0, places: 5) })
        writeStandingFields(&w, doneM: f.doneM, remainingM: f.remainingM, etaS: f.etaS, leg: f.leg, status: f.status)
        // PROTOCOL 6.2: only a jump frame carries `jump`.
        if f.jump { w.field("jump", true) }
        w.endObject()
        return OutboundMessage(bufferWithHeadroom: w.finish(), kind: .frame(tripSlot: slot))
    }

    /// `segment` (PROTOCOL 4).
    static func segment(trip: String, seq: Int, _ s: TripSegment, slot: Int) -> OutboundMessage {
        var w = JSONWriter(headroom: headroom, capacity: 256 + s.path.count * 24)
        w.beginObject()
        w.field("type", "segment")
        w.field("trip", trip)
        w.field("seq", seq)
        w.field("t0", s.t0)
        w.field("duration_ms", s.durationMs)
        w.key("path")
        writeLine(&w, s.path)
        w.field("progress_from", s.progressFrom.map { rounded($0, places: 5) })
        w.field("progress_to", s.progressTo.map { rounded($0, places: 5) })
        writeStandingFields(&w, doneM: s.doneM, remainingM: s.remainingM, etaS: s.etaS, leg: s.leg, status: s.status)
        if s.jump { w.field("jump", true) }
        w.endObject()
        return OutboundMessage(bufferWithHeadroom: w.finish(), kind: .frame(tripSlot: slot))
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

    /// `event` (PROTOCOL 4): the payload bytes, without headroom (stored as first sent).
    static func eventPayload(trip: String, _ e: TripEvent) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 160)
        w.beginObject()
        w.field("type", "event")
        w.field("trip", trip)
        w.field("n", e.n)
        w.field("name", e.kind.name)
        w.field("t", e.t)
        w.coordinateField("lat", e.position?.lat)
        w.coordinateField("lon", e.position?.lon)
        switch e.kind {
        case .waypointReached(let index, let remaining), .waypointResumed(let index, let remaining):
            w.field("index", index)
            w.field("remaining_waypoints", remaining)
        case .offRoute(let distance):
            w.field("distance_m", rounded(distance, places: 1))
        default:
            break
        }
        w.endObject()
        return w.finish()
    }

    /// The fields of a trip shared by `snapshot` and the HTTP trip bodies.
    struct TripView {
        var id: String
        var entry: TripEntry?
        var trail: [StoredFix]
        var now: Int64
        var includeRoute = true
        var includeTrail = true
    }

    /// Writes the trip's fields (PROTOCOL 4 `snapshot`, without `type`, `re`, `recovered`)
    /// into an object the caller has opened.
    static func writeTripFields(_ w: inout JSONWriter, _ view: TripView) {
        w.field("trip", view.id)
        guard let entry = view.entry else {
            w.field("status", TripStatus.unknown.rawValue)
            w.nullField("rider")
            w.nullField("config")
            if view.includeRoute { w.nullField("route") }
            w.key("waypoints"); w.beginArray(); w.endArray()
            w.nullField("destination")
            w.nullField("position")
            w.nullField("bearing")
            w.nullField("progress")
            w.nullField("done_m")
            w.nullField("remaining_m")
            w.nullField("eta_s")
            w.field("leg", 0)
            if view.includeTrail { w.key("trail"); w.beginArray(); w.endArray() }
            w.field("last_event", 0)
            return
        }
        let trip = entry.trip
        w.field("status", trip.status.rawValue)
        w.key("rider")
        if let rider = entry.riderJSON { w.raw(rider) } else { w.null() }
        w.key("config")
        w.beginObject()
        w.field("arrival_buffer_m", trip.config.arrivalBufferM)
        w.field("reroute_distance_m", trip.config.rerouteDistanceM)
        w.field("wait_at_waypoints", trip.config.waitAtWaypoints)
        w.field("max_speed_mps", trip.config.maxSpeedMps)
        w.endObject()
        if view.includeRoute {
            w.key("route")
            if let route = trip.route { writeLine(&w, route.points) } else { w.null() }
        }
        w.key("waypoints")
        w.beginArray()
        for waypoint in trip.waypoints {
            w.beginObject()
            w.field("index", waypoint.index)
            w.coordinateField("lat", waypoint.point.lat)
            w.coordinateField("lon", waypoint.point.lon)
            w.field("visited", waypoint.visited)
            w.endObject()
        }
        w.endArray()
        w.key("destination")
        writePoint(&w, trip.destination)
        let marker = trip.marker(at: view.now)
        w.key("position")
        writePoint(&w, marker?.position)
        w.field("bearing", marker.map { rounded($0.bearingDeg, places: 1) })
        let info: (progress: Double?, doneM: Double?, remainingM: Double?, etaS: Int?) =
            marker == nil ? (nil, nil, nil, nil) : trip.progressInfo(at: view.now)
        w.field("progress", info.progress.map { rounded($0, places: 5) })
        w.field("done_m", info.doneM.map { rounded($0, places: 1) })
        w.field("remaining_m", info.remainingM.map { rounded($0, places: 1) })
        w.field("eta_s", info.etaS)
        w.field("leg", trip.leg)
        if view.includeTrail {
            w.key("trail")
            w.beginArray()
            for stored in view.trail {
                w.beginArray()
                w.coordinate(stored.fix.lon)
                w.coordinate(stored.fix.lat)
                w.int(stored.fix.ts)
                w.endArray()
            }
            w.endArray()
        }
        w.field("last_event", trip.lastEventNumber)
    }

    /// `snapshot` (PROTOCOL 4).
    static func snapshot(_ view: TripView, re: MessageID?, recovered: Bool?) -> OutboundMessage {
        var w = JSONWriter(headroom: headroom, capacity: 1024)
        w.beginObject()
        w.field("type", "snapshot")
        w.reField(re)
        writeTripFields(&w, view)
        if let recovered { w.field("recovered", recovered) }
        w.endObject()
        return OutboundMessage(bufferWithHeadroom: w.finish(), kind: .snapshot(trip: view.id))
    }

    /// A trip as an HTTP body.
    static func tripBody(_ view: TripView) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 1024)
        w.beginObject()
        writeTripFields(&w, view)
        w.endObject()
        return w.finish()
    }

    static func writeLine(_ w: inout JSONWriter, _ points: [GeoPoint]) {
        w.beginArray()
        for point in points { w.lonLat(lon: point.lon, lat: point.lat) }
        w.endArray()
    }

    static func writePoint(_ w: inout JSONWriter, _ point: GeoPoint?) {
        guard let point else { w.null(); return }
        w.beginObject()
        w.coordinateField("lat", point.lat)
        w.coordinateField("lon", point.lon)
        w.endObject()
    }

    /// Rounds for the wire: sub-decimetre precision is noise in a GPS tracker, and shorter
    /// numbers are fewer bytes per delivery.
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
