import TrackHubCore

extension Fields {
    /// The stop details of a `waypoints` array already read as points (PROTOCOL 17): each
    /// element's `id` (trip-id alphabet, 1–64, unique within the array), `name` (at most 200
    /// characters) and `dwell_s` (integer 0–3 600, default 0). Empty when no element has any.
    static func stopDetails(_ value: JSONValue, _ name: String) throws(ProtocolError) -> [StopDetails] {
        guard case .array(let array) = value else { return [] }
        var details: [StopDetails] = []
        details.reserveCapacity(array.count)
        var seen = Set<String>()
        var anyGiven = false
        for (index, element) in array.enumerated() {
            guard case .object(let object) = element else { return [] }
            let prefix = "\(name)[\(index)]"
            let id = try optionalTripID(object["id"], prefix + ".id")
            if let id, !seen.insert(id).inserted {
                throw .badRequest("\(prefix).id repeats the id of an earlier waypoint")
            }
            let stopName = try optionalString(object["name"], prefix + ".name")
            if let stopName, stopName.count > StopDetails.maxNameLength {
                throw .badRequest("\(prefix).name must be at most \(StopDetails.maxNameLength) characters")
            }
            let dwell = try optionalInteger(object["dwell_s"], prefix + ".dwell_s", 0...Int64(StopDetails.maxDwellS))
            let d = StopDetails(id: id, name: stopName, dwellS: Int(dwell ?? 0))
            if d != StopDetails() { anyGiven = true }
            details.append(d)
        }
        return anyGiven ? details : []
    }
}
