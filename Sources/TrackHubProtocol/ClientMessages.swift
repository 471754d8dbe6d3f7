import TrackHubCore

/// Encoders for the messages a client sends on the WebSocket (PROTOCOL section 3), for
/// courier apps, viewers and load generators written in Swift; `ClientMessage.decode` reads
/// them back. Each returns one text frame's bytes after `headroom` leading bytes (e.g.
/// libwebsockets' `LWS_PRE`, so the buffer can be written without a copy). `id` is written
/// only when given; the hub echoes it as `re` in the direct reply.
///
/// Members are written as `op`, `id`, then the op's fields in the order PROTOCOL 3 lists
/// them. Coordinates have 7 decimals
/// (about 1 cm); other numbers are written in the shortest form that reads back the same.
public enum ClientMessages {
    /// `hello {token?}`: presents a token (or none, on an open hub); answered `welcome`.
    public static func hello(token: String?, id: MessageID? = nil, headroom: Int = 0) -> [UInt8] {
        var w = begin("hello", id: id, headroom: headroom, capacity: 32 + (token?.utf8.count ?? 0))
        w.optionalField("token", token)
        return end(&w)
    }

    /// `subscribe {trip, mode?, since_event?}`: answered `snapshot`, then live messages.
    /// - Parameters:
    ///   - mode: `frames` or `segments`; nil: left out (the hub's default, `frames`).
    ///   - sinceEvent: replay the events after this `n` (PROTOCOL 7); nil: no replay.
    public static func subscribe(
        trip: String, mode: SubscriptionMode? = nil, sinceEvent: Int64? = nil, id: MessageID? = nil, headroom: Int = 0
    ) -> [UInt8] {
        var w = begin("subscribe", id: id, headroom: headroom, capacity: 64 + trip.utf8.count)
        w.field("trip", trip)
        w.optionalField("mode", mode?.rawValue)
        w.optionalField("since_event", sinceEvent)
        return end(&w)
    }

    /// `unsubscribe {trip}`: answered `unsubscribed`.
    public static func unsubscribe(trip: String, id: MessageID? = nil, headroom: Int = 0) -> [UInt8] {
        tripOnly("unsubscribe", trip: trip, id: id, headroom: headroom)
    }

    /// `fix {trip, lat, lon, ts, seq?, duration_ms?, speed_mps?, heading?, accuracy_m?, battery?}`:
    /// answered `ack` once stored. `ts` and `duration_ms` in ms, `speed_mps` in m/s,
    /// `heading` in degrees, `accuracy_m` in metres, `battery` in percent; absent optional
    /// fields are left out.
    public static func fix(trip: String, _ fix: FixInput, id: MessageID? = nil, headroom: Int = 0) -> [UInt8] {
        var w = begin("fix", id: id, headroom: headroom, capacity: 200)
        w.field("trip", trip)
        fix.writeMembers(to: &w)
        return end(&w)
    }

    /// `proceed {trip}`: a `holding` trip goes on; answered `ack`.
    public static func proceed(trip: String, id: MessageID? = nil, headroom: Int = 0) -> [UInt8] {
        tripOnly("proceed", trip: trip, id: id, headroom: headroom)
    }

    /// `viewport {bbox, zoom}`: `bbox` `[west, south, east, north]` in degrees and `zoom`
    /// 0–22, answered `clusters`; nil: `{"bbox":null}`, which stops them (no reply).
    public static func viewport(_ viewport: Viewport?, id: MessageID? = nil, headroom: Int = 0) -> [UInt8] {
        var w = begin("viewport", id: id, headroom: headroom, capacity: 128)
        w.key("bbox")
        if let viewport {
            w.beginArray()
            w.coordinate(viewport.west)
            w.coordinate(viewport.south)
            w.coordinate(viewport.east)
            w.coordinate(viewport.north)
            w.endArray()
            w.field("zoom", viewport.zoom)
        } else {
            w.null()
        }
        return end(&w)
    }

    /// `ping`: answered `pong` with the hub's clock.
    public static func ping(id: MessageID? = nil, headroom: Int = 0) -> [UInt8] {
        var w = begin("ping", id: id, headroom: headroom, capacity: 32)
        return end(&w)
    }

    private static func tripOnly(_ op: String, trip: String, id: MessageID?, headroom: Int) -> [UInt8] {
        var w = begin(op, id: id, headroom: headroom, capacity: 48 + trip.utf8.count)
        w.field("trip", trip)
        return end(&w)
    }

    @inline(__always)
    private static func begin(_ op: String, id: MessageID?, headroom: Int, capacity: Int) -> JSONWriter {
        var w = JSONWriter(headroom: headroom, capacity: capacity)
        w.beginObject()
        w.field("op", op)
        if let id {
            w.key("id")
            w.messageID(id)
        }
        return w
    }

    @inline(__always)
    private static func end(_ w: inout JSONWriter) -> [UInt8] {
        w.endObject()
        return w.finish()
    }
}

extension FixInput {
    /// Writes the fix's members into an open object, in PROTOCOL 3's order: `lat`, `lon`,
    /// `ts`, then `seq`, `duration_ms`, `speed_mps`, `heading`, `accuracy_m`, `battery`
    /// (PROTOCOL 18) where present.
    func writeMembers(to w: inout JSONWriter) {
        w.coordinateField("lat", lat)
        w.coordinateField("lon", lon)
        w.field("ts", ts)
        w.optionalField("seq", seq)
        if let durationMs { w.field("duration_ms", durationMs) }
        if let speedMps { w.field("speed_mps", speedMps) }
        if let heading { w.field("heading", heading) }
        if let accuracyM { w.field("accuracy_m", accuracyM) }
        if let batteryPercent { w.field("battery", batteryPercent) }
    }
}
