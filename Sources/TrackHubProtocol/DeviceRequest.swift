import TrackHubCore

/// The body of `PUT /v1/devices/{device}` (PROTOCOL 11): `{trip, name?}`, `trip` a trip id
/// or `null` (bound to none). Errors name the field.
public struct DeviceRequest: Sendable, Equatable {
    /// The longest `name` accepted, in bytes of UTF-8.
    public static let maxNameBytes = 256

    /// The trip id to bind the device to; nil (`null`) leaves it bound to none.
    public var trip: String?
    /// A label for people, at most `maxNameBytes`; nil when not given (a `PUT` without it clears it).
    public var name: String?

    /// A request from fields already checked; `decode` checks a body's.
    public init(trip: String?, name: String?) {
        self.trip = trip
        self.name = name
    }

    /// Decodes the body: `trip` is required (a trip id or `null`), `name` optional.
    /// - Throws: `bad_request` naming the field (or for a body that is not a JSON object),
    ///   `too_large` for a `name` over `maxNameBytes`.
    public static func decode(_ body: [UInt8], limits: ProtocolLimits = .default) throws(ProtocolError) -> DeviceRequest {
        let object = try RequestBody.object(body, limits: limits, emptyIsObject: false)
        guard let tripValue = object["trip"] else { throw .badRequest("trip is required (a trip id, or null to unbind)") }
        let trip = try Fields.optionalTripID(tripValue, "trip")
        let name = try Fields.optionalString(object["name"], "name")
        if let name, name.utf8.count > maxNameBytes { throw .tooLarge("name is longer than \(maxNameBytes) bytes") }
        return DeviceRequest(trip: trip, name: name)
    }
}

/// A device as the HTTP API shows it (PROTOCOL 11): `{device, trip, name, last_seen, last_position}`.
public struct DeviceView: Sendable, Equatable {
    /// The device id, which is also its credential on the phone endpoints.
    public var device: String
    /// The trip its fixes go to now; nil when bound to none or when its trip has ended.
    public var trip: String?
    /// The label given at `PUT`; nil when none.
    public var name: String?
    /// The `ts` of its latest fix, ms since the epoch; nil before the first.
    public var lastSeen: Int64?
    /// Where its latest fix put it; nil before the first.
    public var lastPosition: GeoPoint?

    /// The view of one device, as the hub's device table has it.
    public init(device: String, trip: String?, name: String?, lastSeen: Int64?, lastPosition: GeoPoint?) {
        self.device = device
        self.trip = trip
        self.name = name
        self.lastSeen = lastSeen
        self.lastPosition = lastPosition
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("device", device)
        w.key("trip")
        if let trip { w.string(trip) } else { w.null() }
        w.key("name")
        if let name { w.string(name) } else { w.null() }
        w.key("last_seen")
        if let lastSeen { w.int(lastSeen) } else { w.null() }
        w.key("last_position")
        if let lastPosition {
            w.beginObject()
            w.key("lat")
            w.coordinate(lastPosition.lat)
            w.key("lon")
            w.coordinate(lastPosition.lon)
            w.endObject()
        } else {
            w.null()
        }
        w.endObject()
    }
}

extension HTTPBodies {
    /// `PUT` / `GET /v1/devices/{device}`: the device.
    public static func device(_ view: DeviceView) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 160)
        view.write(to: &w)
        return w.finish()
    }

    /// `GET /v1/devices`: `{devices: [...]}`, in the order given.
    public static func deviceList(_ views: [DeviceView]) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 32 + views.count * 160)
        w.beginObject()
        w.key("devices")
        w.beginArray()
        for view in views { view.write(to: &w) }
        w.endArray()
        w.endObject()
        return w.finish()
    }
}
