/// The trip's state as the store keeps it, written by hand.
///
/// Why: the store writes the state of every trip that moved, every 100 ms round, so once per
/// fix at one fix a second per courier. Through `Codable` (even the store's streaming encoder)
/// each of its ~80 values went through a protocol witness and an existential container: about
/// 20 µs a state and 5 % of a hub's CPU taking 500 fixes a second (BENCHMARKS.md, "The fix
/// path"). Here each value is one append.
///
/// The bytes are exactly those of `Trip`'s synthesized `Encodable` conformance through the
/// store's encoder (the same keys in the same order, `encodeIfPresent` for optionals, the same
/// spelling of numbers), so what loads states (`JSONDecoder`, `Trip`'s `Decodable`) is
/// unchanged. `StoredStateJSONTests` holds them equal for trips in every state, and fails
/// when a stored property of `Trip` or of a type inside it is not written here.
extension Trip {
    /// The JSON object of the trip without `route`, `seenSeqs` and `seenTimestamps`, which the
    /// store keeps elsewhere (its own column; rebuilt from the stored fixes).
    /// - Throws: `EncodingError.invalidValue` naming the key of a non-finite number.
    public func storedStateJSON(capacity: Int = 2048) throws -> [UInt8] {
        var w = JSONFieldWriter(capacity: capacity)
        w.beginObject()
        w.field("id", id)
        w.key("waypoints")
        w.beginArray()
        for waypoint in waypoints {
            w.element()
            waypoint.write(to: &w)
        }
        w.endArray()
        if let destination {
            w.key("destination")
            destination.write(to: &w)
        }
        w.field("destinationAlongM", ifPresent: destinationAlongM)
        w.key("config")
        config.write(to: &w)
        w.field("lastEventNumber", lastEventNumber)
        w.field("arrivedAt", ifPresent: arrivedAt)
        w.field("endedAt", ifPresent: endedAt)
        w.field("holdingPosition", ifPresent: holdingPosition)
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
        w.field("previousAppliedTs", ifPresent: previousAppliedTs)
        if let speedReference {
            w.key("speedReference")
            w.beginObject()
            w.field("ts", speedReference.ts)
            w.key("point")
            speedReference.point.write(to: &w)
            w.field("alongM", ifPresent: speedReference.alongM)
            w.endObject()
        }
        w.field("speedMps", ifPresent: speedMps)
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
                w.element()
                w.beginObject()
                w.field("ts", timing.ts)
                w.field("receivedAt", timing.receivedAt)
                w.endObject()
            }
            w.endArray()
        }
        w.field("nextFrameIsJump", ifPresent: nextFrameIsJump)
        w.field("frameDue", ifPresent: frameDue)
        w.field("routeOrigin", ifPresent: routeOrigin?.rawValue)
        w.field("routerDurationS", ifPresent: routerDurationS)
        w.field("offRouteFixes", ifPresent: offRouteFixes)
        w.field("lastTargetAlongM", ifPresent: lastTargetAlongM)
        if let signal {
            w.key("signal")
            signal.write(to: &w)
        }
        w.field("holdingSince", ifPresent: holdingSince)
        w.endObject()
        if let failure = w.failure {
            throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: "trip \(id): \(failure)"))
        }
        return w.bytes
    }
}

extension GeoPoint {
    fileprivate func write(to w: inout JSONFieldWriter) {
        w.beginObject()
        w.field("lat", lat)
        w.field("lon", lon)
        w.endObject()
    }
}

extension Waypoint {
    fileprivate func write(to w: inout JSONFieldWriter) {
        w.beginObject()
        w.field("index", index)
        w.key("point")
        point.write(to: &w)
        w.field("alongM", ifPresent: alongM)
        w.field("visited", visited)
        w.field("id", ifPresent: id)
        w.field("name", ifPresent: name)
        w.field("dwellS", dwellS)
        w.endObject()
    }
}

extension TripConfig {
    fileprivate func write(to w: inout JSONFieldWriter) {
        w.beginObject()
        w.field("arrivalBufferM", arrivalBufferM)
        w.field("rerouteDistanceM", rerouteDistanceM)
        w.field("waitAtWaypoints", waitAtWaypoints)
        w.field("maxSpeedMps", maxSpeedMps)
        w.field("mode", mode.rawValue)
        w.field("autoReroute", ifPresent: autoReroute)
        w.endObject()
    }
}

extension Animation {
    /// The path as Swift's synthesized coding of an enum writes it: `{"case":{labels…}}`.
    fileprivate func write(to w: inout JSONFieldWriter) {
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
    fileprivate func write(to w: inout JSONFieldWriter) {
        w.beginObject()
        w.field("lastFixT", lastFixT)
        w.field("battery", ifPresent: battery)
        w.key("arrivals")
        w.beginArray()
        for arrival in arrivals {
            w.element()
            w.value(arrival)
        }
        w.endArray()
        w.field("lostSilence", ifPresent: lostSilence)
        w.field("batteryLowSent", batteryLowSent)
        w.endObject()
    }
}
