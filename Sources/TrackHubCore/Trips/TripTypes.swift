/// The per-trip settings of PROTOCOL section 5, with their defaults.
public struct TripConfig: Sendable, Codable, Equatable {
    /// How close the marker must come to a waypoint or the destination to reach it (1–1 000 m).
    public var arrivalBufferM: Double
    /// How far a fix may be from the route and still be on it (10–10 000 m).
    public var rerouteDistanceM: Double
    /// Whether the trip holds at each waypoint until `proceed`.
    public var waitAtWaypoints: Bool
    /// Fixes implying a faster speed than this since the previous applied fix are outliers (1–1 000 m/s).
    public var maxSpeedMps: Double
    /// How the rider travels, for the routes the hub finds (PROTOCOL 16).
    public var mode: TravelMode
    /// Whether the hub finds a new route when the rider strays (PROTOCOL 16); nil until the
    /// hub fills in its default (true with a router, false without).
    public var autoReroute: Bool?

    /// A trip's settings; each default is PROTOCOL 5's (50 m, 100 m, wait, 70 m/s, car);
    /// `autoReroute` nil leaves it to the hub.
    public init(
        arrivalBufferM: Double = 50,
        rerouteDistanceM: Double = 100,
        waitAtWaypoints: Bool = true,
        maxSpeedMps: Double = 70,
        mode: TravelMode = .car,
        autoReroute: Bool? = nil
    ) {
        self.arrivalBufferM = arrivalBufferM
        self.rerouteDistanceM = rerouteDistanceM
        self.waitAtWaypoints = waitAtWaypoints
        self.maxSpeedMps = maxSpeedMps
        self.mode = mode
        self.autoReroute = autoReroute
    }

    private enum CodingKeys: String, CodingKey {
        case arrivalBufferM, rerouteDistanceM, waitAtWaypoints, maxSpeedMps, mode, autoReroute
    }

    /// Decodes a stored config; `mode` and `autoReroute` are absent from configs stored
    /// before PROTOCOL 16 and read as `car` and off.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        arrivalBufferM = try c.decode(Double.self, forKey: .arrivalBufferM)
        rerouteDistanceM = try c.decode(Double.self, forKey: .rerouteDistanceM)
        waitAtWaypoints = try c.decode(Bool.self, forKey: .waitAtWaypoints)
        maxSpeedMps = try c.decode(Double.self, forKey: .maxSpeedMps)
        mode = try c.decodeIfPresent(TravelMode.self, forKey: .mode) ?? .car
        autoReroute = try c.decodeIfPresent(Bool.self, forKey: .autoReroute)
    }

    /// Whether auto-reroute is on (nil, not yet filled in, reads as off).
    public var reroutesAutomatically: Bool { autoReroute ?? false }
}

/// How a rider travels (PROTOCOL 16 `config.mode`); the raw value is the wire spelling.
public enum TravelMode: String, Sendable, Codable, CaseIterable {
    case car, bicycle, foot
}

/// Where a trip's route came from (PROTOCOL 16 `route_source`); the raw value is the wire spelling.
public enum RouteSource: String, Sendable, Codable {
    /// Given by a client (`route`, `route_polyline`, `PUT .../route`).
    case client
    /// Found by the hub's router.
    case router
}

/// Why a trip got a new route (the `rerouted` event's `reason`); the raw value is the wire spelling.
public enum RerouteReason: String, Sendable, Codable {
    /// A client put it (`PUT .../route`).
    case client
    /// The hub found it after the rider left the route (PROTOCOL 16).
    case offRoute = "off_route"
}

/// A trip's status (PROTOCOL 6.10); the raw value is the wire spelling.
public enum TripStatus: String, Sendable, Codable, CaseIterable {
    case unknown, pending, moving, holding
    case offRoute = "off_route"
    case arrived, ended
}

/// One GPS fix as a courier sent it (PROTOCOL section 3, `fix`), already validated.
public struct FixInput: Sendable, Equatable, Codable {
    /// Latitude in degrees, within ±90.
    public var lat: Double
    /// Longitude in degrees, within ±180.
    public var lon: Double
    /// When the device took the fix, ms since the epoch.
    public var ts: Int64
    /// The courier's number for this fix, unique per trip; nil when not sent.
    public var seq: Int64?
    /// How long the animation to this fix should take; nil: derived (6.2).
    public var durationMs: Double?
    /// Speed the device reported, m/s (at least 0); nil when not sent.
    public var speedMps: Double?
    /// Heading the device reported, degrees clockwise from north (any number, taken modulo
    /// 360); nil when not sent.
    public var heading: Double?
    /// The device's accuracy radius in metres (at least 0); nil when not sent, judged as 0.
    public var accuracyM: Double?
    /// Metres above sea level, as a phone app reported it (PROTOCOL 11); kept, not judged.
    public var altitudeM: Double?
    /// Battery charge in percent (0–100), as a phone app reported it (PROTOCOL 11); kept, not judged.
    public var batteryPercent: Double?

    /// A fix; only position and time are required.
    public init(
        lat: Double, lon: Double, ts: Int64, seq: Int64? = nil, durationMs: Double? = nil,
        speedMps: Double? = nil, heading: Double? = nil, accuracyM: Double? = nil,
        altitudeM: Double? = nil, batteryPercent: Double? = nil
    ) {
        self.lat = lat
        self.lon = lon
        self.ts = ts
        self.seq = seq
        self.durationMs = durationMs
        self.speedMps = speedMps
        self.heading = heading
        self.accuracyM = accuracyM
        self.altitudeM = altitudeM
        self.batteryPercent = batteryPercent
    }

    /// The fix's position.
    public var point: GeoPoint { GeoPoint(lat: lat, lon: lon) }
}

/// Why a stored fix was not animated; the raw value is the wire `reason`.
public enum FixRefusal: String, Sendable, Codable, CaseIterable {
    /// The trip has a fix with this `seq` stored (without seq: one with this `ts`).
    case duplicate
    /// `ts` is not after the previous applied fix's.
    case outOfOrder = "out_of_order"
    /// It implies a speed above `max_speed_mps` since the previous applied fix; the trip is
    /// `holding` at a waypoint; or it has `arrived` or `ended` (PROTOCOL 6.5, checked in this order).
    case outlier, holding, arrived, ended
}

/// The outcome of judging a fix (PROTOCOL 6.5 and the `ack` reasons).
public enum FixVerdict: Sendable, Equatable {
    /// The fix moves the marker (a fix clamped at a waypoint included).
    case applied
    /// Stored, if new, but not animated.
    case refused(FixRefusal)

    /// True when the fix moved the marker.
    public var isApplied: Bool { self == .applied }
    /// Why the fix was refused; nil when applied.
    public var refusal: FixRefusal? {
        if case .refused(let r) = self { return r }
        return nil
    }
}
