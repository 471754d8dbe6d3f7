import TrackHubCore

/// The messages only a link for one stop receives (PROTOCOL 17 "A link for one stop").
public enum StopLinkMessages {
    /// `{"type":"stop","trip":…,"stop":…,"stops_before":…,"eta_s":…,"visible":…}`: how many
    /// stops lie before the customer's, when the courier is expected there (`eta_s` null when
    /// the trip has none), and whether the courier is shown to them.
    public static func stop(trip: String, stop: String, stopsBefore: Int, etaS: Int?, visible: Bool, headroom: Int = 0) -> [UInt8] {
        var writer = JSONWriter(headroom: headroom, capacity: 96 + trip.utf8.count + stop.utf8.count)
        writer.beginObject()
        writer.field("type", "stop")
        writer.field("trip", trip)
        writer.field("stop", stop)
        writer.field("stops_before", stopsBefore)
        writer.field("eta_s", etaS)
        writer.field("visible", visible)
        writer.endObject()
        return writer.finish()
    }

    /// A stored `event` as a link following `followed` gets it, or nil when it gets none
    /// (`StopVisibility.letsThrough`): `battery` `null` (PROTOCOL 18), and `lat`, `lon` `null`
    /// unless `courierShown` and the point is clear of every one of `otherStops` (a replay
    /// passes false: it is not a way to past positions). Nil too for bytes that are not an event.
    /// A link for the destination ends on `arrived` as a share link does, once the marker is there.
    public static func event(_ stored: [UInt8], for followed: StopRef, courierShown: Bool, otherStops: [GeoPoint]) -> LinkEvent? {
        guard case .object(var object)? = try? JSONParser().parse(stored), case .string(let name)? = object["name"] else { return nil }
        var eventStop: String?
        if case .string(let id)? = object["stop"] { eventStop = id }
        guard StopVisibility.letsThrough(eventName: name, eventStop: eventStop, followed: followed) else { return nil }
        var keepsPosition = courierShown
        if keepsPosition, let lat = object["lat"]?.doubleValue, let lon = object["lon"]?.doubleValue {
            keepsPosition = StopVisibility.isClear(GeoPoint(lat: lat, lon: lon), of: otherStops)
        }
        if !keepsPosition {
            object["lat"] = .null
            object["lon"] = .null
        }
        if object["battery"] != nil { object["battery"] = .null }
        var w = JSONWriter(headroom: 0, capacity: stored.count + 16)
        w.value(.object(object))
        return LinkEvent(bytes: w.finish(), isStopReached: name == "waypoint_reached")
    }

    /// An event as a link for one stop gets it.
    public struct LinkEvent: Sendable, Equatable {
        /// The message.
        public var bytes: [UInt8]
        /// True for its own stop's `waypoint_reached` (the only one it gets): its end follows.
        public var isStopReached: Bool
    }
}
