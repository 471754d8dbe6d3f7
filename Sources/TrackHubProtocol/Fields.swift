import TrackHubCore

/// Field validation shared by the message and body decoders. Each helper takes the member's
/// value (nil when absent) and its full name for error messages (e.g. `fixes[3].ts`).
/// "Optional" helpers treat an absent member and `null` alike and return nil for both.
enum Fields {
    /// The value unless absent or `null`.
    static func present(_ value: JSONValue?) -> JSONValue? {
        guard let value, !value.isNull else { return nil }
        return value
    }

    static func missing(_ name: String) -> ProtocolError {
        .badRequest("\(name) is required")
    }

    /// The member's full name: `prefix` + `key` (`fixes[3].` + `ts`).
    static func name(_ prefix: String, _ key: String) -> String {
        prefix.isEmpty ? key : prefix + key
    }

    // MARK: strings

    static func optionalString(_ value: JSONValue?, _ name: String) throws(ProtocolError) -> String? {
        guard let value = present(value) else { return nil }
        guard case .string(let string) = value else { throw .badRequest("\(name) must be a string") }
        return string
    }

    static func requiredTripID(_ value: JSONValue?, _ name: String = "trip") throws(ProtocolError) -> String {
        guard let value else { throw missing(name) }
        guard case .string(let string) = value else { throw TripID.invalidError(field: name) }
        return try TripID.validate(string, field: name)
    }

    static func optionalTripID(_ value: JSONValue?, _ name: String) throws(ProtocolError) -> String? {
        guard let value = present(value) else { return nil }
        return try requiredTripID(value, name)
    }

    // MARK: numbers

    /// A finite number accepted by `accept`; else `bad_request` "`name` must be `requirement`".
    static func number(
        _ value: JSONValue, _ name: String, _ requirement: String, accept: (Double) -> Bool = { _ in true }
    ) throws(ProtocolError) -> Double {
        guard case .number(let number) = value, number.value.isFinite, accept(number.value) else {
            throw .badRequest("\(name) must be \(requirement)")
        }
        return number.value
    }

    static func requiredNumber(
        _ value: JSONValue?, _ name: String, _ requirement: String, accept: (Double) -> Bool = { _ in true }
    ) throws(ProtocolError) -> Double {
        guard let value else { throw missing(name) }
        return try number(value, name, requirement, accept: accept)
    }

    static func optionalNumber(
        _ value: JSONValue?, _ name: String, _ requirement: String, accept: (Double) -> Bool = { _ in true }
    ) throws(ProtocolError) -> Double? {
        guard let value = present(value) else { return nil }
        return try number(value, name, requirement, accept: accept)
    }

    /// The value of an integer member as a `Double` (finite and integral, any size).
    static func integral(_ value: JSONValue, _ name: String) throws(ProtocolError) -> Double {
        guard case .number(let number) = value else { throw .badRequest("\(name) must be an integer") }
        guard number.value.isFinite else { throw .badRequest("\(name) must be a finite integer") }
        guard number.isInteger else { throw .badRequest("\(name) must be an integer") }
        return number.value
    }

    /// An integer within `range` (whose bounds are within ±2^53); else `bad_request`
    /// "`name` must be an integer" or `rangeMessage`.
    static func integer(
        _ value: JSONValue, _ name: String, _ range: ClosedRange<Int64>, rangeMessage: String? = nil
    ) throws(ProtocolError) -> Int64 {
        let double = try integral(value, name)
        guard double >= Double(range.lowerBound), double <= Double(range.upperBound), let integer = Int64(exactly: double)
        else {
            throw .badRequest(rangeMessage ?? "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return integer
    }

    static func optionalInteger(
        _ value: JSONValue?, _ name: String, _ range: ClosedRange<Int64>, rangeMessage: String? = nil
    ) throws(ProtocolError) -> Int64? {
        guard let value = present(value) else { return nil }
        return try integer(value, name, range, rangeMessage: rangeMessage)
    }

    // MARK: other types

    static func optionalBool(_ value: JSONValue?, _ name: String) throws(ProtocolError) -> Bool? {
        guard let value = present(value) else { return nil }
        guard case .bool(let bool) = value else { throw .badRequest("\(name) must be a boolean (true or false)") }
        return bool
    }

    static func object(_ value: JSONValue, _ name: String) throws(ProtocolError) -> JSONObject {
        guard case .object(let object) = value else { throw .badRequest("\(name) must be an object") }
        return object
    }

    static func array(_ value: JSONValue, _ name: String) throws(ProtocolError) -> [JSONValue] {
        guard case .array(let array) = value else { throw .badRequest("\(name) must be an array") }
        return array
    }

    // MARK: points

    static let latitudeRequirement = "a number within ±90"
    static let longitudeRequirement = "a number within ±180"

    /// A point object `{"lat": …, "lon": …}`.
    static func point(_ value: JSONValue, _ name: String) throws(ProtocolError) -> GeoPoint {
        guard case .object(let object) = value else {
            throw .badRequest("\(name) must be a point {\"lat\": …, \"lon\": …}")
        }
        let lat = try requiredNumber(object["lat"], name + ".lat", latitudeRequirement) { abs($0) <= 90 }
        let lon = try requiredNumber(object["lon"], name + ".lon", longitudeRequirement) { abs($0) <= 180 }
        return GeoPoint(lat: lat, lon: lon)
    }

    /// A GeoJSON position `[lon, lat]` (a third element, altitude, is allowed and ignored).
    static func position(_ value: JSONValue, _ name: String) throws(ProtocolError) -> GeoPoint {
        guard case .array(let pair) = value, pair.count == 2 || pair.count == 3 else {
            throw .badRequest("\(name) must be a [lon, lat] pair")
        }
        let lon = try number(pair[0], name + "[0] (lon)", longitudeRequirement) { abs($0) <= 180 }
        let lat = try number(pair[1], name + "[1] (lat)", latitudeRequirement) { abs($0) <= 90 }
        if pair.count == 3 { _ = try number(pair[2], name + "[2] (altitude)", "a number") }
        return GeoPoint(lat: lat, lon: lon)
    }

    /// A list of point objects (`waypoints`); too many is reported through `tooLarge`
    /// (so that `bad_request` takes precedence).
    static func points(
        _ value: JSONValue, _ name: String, limit: Int, tooLarge: inout ProtocolError?
    ) throws(ProtocolError) -> [GeoPoint] {
        let array = try Fields.array(value, name)
        var points: [GeoPoint] = []
        points.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            points.append(try point(element, "\(name)[\(index)]"))
        }
        if array.count > limit, tooLarge == nil {
            tooLarge = .tooLarge("\(name) has \(array.count) points; the limit is \(limit)")
        }
        return points
    }
}
