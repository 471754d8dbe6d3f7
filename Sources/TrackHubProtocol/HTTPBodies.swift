import TrackHubCore

/// Encoders for the JSON bodies the hub answers HTTP requests with (PROTOCOL sections 1 and 5).
/// No HTTP body carries `type`. Each returns the body's bytes, without headroom.
public enum HTTPBodies {
    /// The trip: a snapshot's fields without `type`, `re` and `recovered` (`GET /v1/trips/{id}`,
    /// and the answer of every command on a trip).
    public static func trip(_ view: TripView) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 1024)
        w.beginObject()
        view.writeFields(to: &w)
        w.endObject()
        return w.finish()
    }

    /// `GET /v1/trips`: `{trips: [...], next}`. Each trip is written as its view says (the
    /// list's views leave out `route` and `trail`); `next` is the last id listed when more
    /// follow, else `null`.
    public static func tripList(_ trips: [TripView], next: String?) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 256 + trips.count * 400)
        w.beginObject()
        w.key("trips")
        w.beginArray()
        for view in trips {
            w.beginObject()
            view.writeFields(to: &w)
            w.endObject()
        }
        w.endArray()
        w.field("next", next)
        w.endObject()
        return w.finish()
    }

    /// `POST /v1/trips/{id}/fixes`: `{acks: [{trip, seq?, applied, reason?}, ...]}`, `acks[i]`
    /// answering `fixes[i]` (`seq` when the fix had one, `reason` when not applied).
    public static func acks(trip: String, fixes: [FixInput], verdicts: [FixVerdict]) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 64 + fixes.count * 48)
        w.beginObject()
        w.key("acks")
        w.beginArray()
        for (fix, verdict) in zip(fixes, verdicts) {
            w.beginObject()
            ServerReplies.writeAckMembers(
                to: &w, trip: trip, seq: fix.seq, applied: verdict.isApplied, reason: verdict.refusal?.rawValue)
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.finish()
    }

    /// `{"acks":[]}`: the answer to an empty batch (`{"fixes": []}`).
    public static var noAcks: [UInt8] { acks(trip: "", fixes: [], verdicts: []) }

    /// `GET /healthz`: `{status, trips, connections, server}`.
    /// - Parameters:
    ///   - status: `ok` (answer 200), else `draining`, `unavailable` or `catching_up` (503).
    ///   - trips: trips held.
    ///   - connections: WebSocket connections open.
    ///   - server: the server's name and version.
    public static func health(status: String, trips: Int, connections: Int, server: String) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 128)
        w.beginObject()
        w.field("status", status)
        w.field("trips", trips)
        w.field("connections", connections)
        w.field("server", server)
        w.endObject()
        return w.finish()
    }

    /// An error: `{"error":{"code":…,"message":…}}`, sent with `error.httpStatus` (400 for a
    /// bad request or a bad `Content-Length`, 413 for a body over `--max-body`, ...).
    public static func error(_ error: ProtocolError) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 48 + error.message.utf8.count)
        w.beginObject()
        w.key("error")
        w.beginObject()
        w.field("code", error.code.rawValue)
        w.field("message", error.message)
        w.endObject()
        w.endObject()
        return w.finish()
    }
}
