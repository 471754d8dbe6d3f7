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
}
