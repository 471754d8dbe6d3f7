/// The trip's state as the store keeps it, written by hand.
///
/// Why: the store writes the state of every trip that moved, every 100 ms round, so once per
/// fix at one fix a second per courier. Through `Codable` (even the store's streaming encoder)
/// each of its ~80 values went through a protocol witness and an existential container: about
/// 20 µs a state and 5 % of a hub's CPU taking 500 fixes a second (BENCHMARKS.md, "The fix
/// path"). Here each value is one append.
///
/// The JSON is the value `Trip`'s synthesized `Encodable` conformance writes (the same keys in
/// the same order, an optional left out when nil as `encodeIfPresent` does; `JSONWriter`
/// spells an integral number without `.0`, which decodes alike), so what loads states
/// (`JSONDecoder`, `Trip`'s `Decodable`) is unchanged. `StoredStateJSONTests` holds the two
/// equal for trips in every state and reads each back as the same trip, and fails when a
/// stored property of `Trip` or of a type inside it is not written here.
extension Trip {
    /// The JSON object of the trip without `route`, `seenSeqs` and `seenTimestamps`, which the
    /// store keeps elsewhere (its own column; rebuilt from the stored fixes).
    /// - Throws: `EncodingError.invalidValue` when a number of it is NaN or infinite (JSON
    ///   has no such number).
    public func storedStateJSON(capacity: Int = 2048) throws -> [UInt8] {
        var w = JSONWriter(capacity: capacity)
        w.beginObject()
        w.field("id", id)
        w.key("waypoints")
        w.beginArray()
        for waypoint in waypoints {
            waypoint.write(to: &w)
        }
        w.endArray()
        if let destination {
            w.key("destination")
            destination.write(to: &w)
        }
        w.optionalField("destinationAlongM", destinationAlongM)
        w.key("config")
        config.write(to: &w)
        w.field("lastEventNumber", lastEventNumber)
        w.optionalField("arrivedAt", arrivedAt)
        w.optionalField("endedAt", endedAt)
        w.optionalField("holdingPosition", holdingPosition)
        w.field("visitedCount", visitedCount)
        w.field("highestWaypointIndex", highestWaypointIndex)
        w.field("isOffRoute", isOffRoute)
        if let lastApplied {
            w.key("lastApplied")
            w.beginObject()
            w.field("ts", lastApplied.ts)
            w.key("point")
            lastApplied.point.write(to: &w)
            w.endObject()
        }
        w.optionalField("previousAppliedTs", previousAppliedTs)
        if let speedReference {
            w.key("speedReference")
            w.beginObject()
            w.field("ts", speedReference.ts)
            w.key("point")
            speedReference.point.write(to: &w)
            w.optionalField("alongM", speedReference.alongM)
            w.endObject()
        }
        w.optionalField("speedMps", speedMps)
        if let animation {
            w.key("animation")
            animation.write(to: &w)
        }
        w.field("onRouteAlongM", onRouteAlongM)
        w.field("restingBearing", restingBearing)
        if let lastFramePosition {
            w.key("lastFramePosition")
            lastFramePosition.write(to: &w)
        }
        w.field("framedThrough", framedThrough)
        w.field("needsCheck", needsCheck)
        if let recentFixTimes {
            w.key("recentFixTimes")
            w.beginArray()
            for timing in recentFixTimes {
                    w.beginObject()
                w.field("ts", timing.ts)
                w.field("receivedAt", timing.receivedAt)
                w.endObject()
            }
            w.endArray()
        }
        w.optionalField("nextFrameIsJump", nextFrameIsJump)
        w.optionalField("frameDue", frameDue)
        w.optionalField("routeOrigin", routeOrigin?.rawValue)
        w.optionalField("routerDurationS", routerDurationS)
        w.optionalField("offRouteFixes", offRouteFixes)
        w.optionalField("lastTargetAlongM", lastTargetAlongM)
        if let signal {
            w.key("signal")
            signal.write(to: &w)
        }
        w.optionalField("holdingSince", holdingSince)
        w.endObject()
        // `JSONWriter` writes null for NaN or an infinity; `Trip`'s decoding would then refuse
        // the whole state at the next start, so the store's commit fails now instead.
        if w.wroteNonFiniteNumber {
            throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: "trip \(id): a number of its state is not finite"))
        }
        return w.finish()
    }
}

extension GeoPoint {
    fileprivate func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("lat", lat)
        w.field("lon", lon)
        w.endObject()
    }
}

extension Waypoint {
    fileprivate func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("index", index)
        w.key("point")
        point.write(to: &w)
        w.optionalField("alongM", alongM)
        w.field("visited", visited)
        w.optionalField("id", id)
        w.optionalField("name", name)
        w.field("dwellS", dwellS)
        w.endObject()
    }
}

extension TripConfig {
    fileprivate func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("arrivalBufferM", arrivalBufferM)
        w.field("rerouteDistanceM", rerouteDistanceM)
        w.field("waitAtWaypoints", waitAtWaypoints)
        w.field("maxSpeedMps", maxSpeedMps)
        w.field("mode", mode.rawValue)
        w.optionalField("autoReroute", autoReroute)
        w.endObject()
    }
}

extension Animation {
    /// The path as Swift's synthesized coding of an enum writes it: `{"case":{labels…}}`.
    fileprivate func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("path")
        w.beginObject()
        switch path {
        case .alongRoute(let fromM, let toM):
            w.key("alongRoute")
            w.beginObject()
            w.field("fromM", fromM)
            w.field("toM", toM)
        case .straight(let from, let to):
            w.key("straight")
            w.beginObject()
            w.key("from")
            from.write(to: &w)
            w.key("to")
            to.write(to: &w)
        case .straightToRoute(let from, let toM):
            w.key("straightToRoute")
            w.beginObject()
            w.key("from")
            from.write(to: &w)
            w.field("toM", toM)
        case .viaRoute(let from, let entryM, let toM):
            w.key("viaRoute")
            w.beginObject()
            w.key("from")
            from.write(to: &w)
            w.field("entryM", entryM)
            w.field("toM", toM)
        }
        w.endObject()
        w.endObject()
        w.field("startT", startT)
        w.field("durationMs", durationMs)
        w.endObject()
    }
}

extension CourierSignal {
    fileprivate func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("lastFixT", lastFixT)
        w.optionalField("battery", battery)
        w.key("arrivals")
        w.beginArray()
        for arrival in arrivals {
            w.int(arrival)
        }
        w.endArray()
        w.optionalField("lostSilence", lostSilence)
        w.field("batteryLowSent", batteryLowSent)
        w.endObject()
    }
}
