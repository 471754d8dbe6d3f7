import TrackHubCore

/// The OsmAnd protocol as the Traccar Client and OsmAnd send it (PROTOCOL 11), decoded into
/// one `DeviceFix`: fields in the query string (GET or POST), in an
/// `application/x-www-form-urlencoded` body, or the JSON body of Traccar Client 9 and later
/// (`{device_id, location: {timestamp, coords: {...}, battery: {level}}}`). Pure: no I/O.
///
/// A body whose first non-blank byte is `{` is JSON, any other non-empty body a form; form
/// fields win over query fields of the same name. Unknown fields (`hdop`, `cell`, `wifi`,
/// `extras`, `activity`, ...) are ignored; a negative speed, heading, accuracy or battery
/// means unknown. Errors are `bad_request` naming the field.
public enum OsmAndRequest {
    /// Knots to metres per second.
    public static let metresPerSecondPerKnot = 0.514444
    /// The most fields a form body may have (PROTOCOL 11): a phone sends about fifteen, and
    /// counting them is a scan of the bytes, so a body of many tiny fields is refused before
    /// any is decoded.
    public static let maxFormFields = 100

    /// The device id of a form body (the last `id`, else the last `deviceid`, as `parse` reads
    /// them; a form field wins over the query), found by a scan of the bytes without decoding the other fields, so an
    /// unknown device can be refused before the rest is parsed (PROTOCOL 11, "Identity before
    /// work"). Nil for a JSON body, an empty one, or a form without an id.
    public static func deviceID(formBody body: [UInt8]) -> String? {
        guard let first = body.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }), first != UInt8(ascii: "{") else {
            return nil
        }
        var id: String?
        var deviceID: String?
        for field in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let name = field.prefix { $0 != UInt8(ascii: "=") }
            guard name.count == 2 || name.count == 8, name.count < field.count else { continue }
            let value = field[(field.startIndex + name.count + 1)...]
            let decoded = QueryString.percentDecode(Substring(decoding: value, as: UTF8.self))?.trimmingCharacters(in: " \t\r\n")
            if name.elementsEqual("id".utf8) { id = decoded ?? "" }
            if name.elementsEqual("deviceid".utf8) { deviceID = decoded ?? "" }
        }
        return [id, deviceID].compactMap { $0 }.first { !$0.isEmpty }
    }

    /// Decodes a request. `now` (ms) is the time of a fix without `timestamp` and the bound
    /// of PROTOCOL 1's clock skew.
    public static func parse(
        query: [(name: String, value: String)], body: [UInt8], limits: ProtocolLimits = .default, now: Int64
    ) throws(ProtocolError) -> DeviceFix {
        let start = body.firstIndex(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) })
        guard let start else { return try parseFields(QueryString(items: query), limits: limits, now: now) }
        if body[start] == UInt8(ascii: "{") {
            return try parseJSON(body, limits: limits, now: now)
        }
        let fields = body.reduce(1) { $0 + ($1 == UInt8(ascii: "&") ? 1 : 0) }
        if fields > maxFormFields {
            throw .badRequest("body: a form has at most \(maxFormFields) fields (this one has \(fields))")
        }
        guard let text = String(validating: body, as: UTF8.self) else {
            throw .badRequest("body: a form body must be UTF-8")
        }
        let form = try QueryString.parse(text.trimmingCharacters(in: " \t\r\n"))
        return try parseFields(QueryString(items: query + form.items), limits: limits, now: now)
    }

    /// The top-level `device_id` of Traccar Client's JSON body, found by one pass over the
    /// bytes that tracks only nesting and strings, without building the document (PROTOCOL
    /// 11: the id is found before the rest is parsed). Nil when there is no such key, or its
    /// value is not a plain string (an escape in it: a valid id has none); the parser then
    /// decides.
    public static func deviceID(jsonBody body: [UInt8]) -> String? {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        let key = Array("device_id".utf8)
        var depth = 0
        var i = 0
        func skipBlanks() { while i < body.count, body[i] == 0x20 || body[i] == 0x09 || body[i] == 0x0A || body[i] == 0x0D { i += 1 } }
        while i < body.count {
            switch body[i] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                i += 1
            case quote:
                // A string: a key of the top-level object when followed by `:` at depth 1.
                let start = i + 1
                i = start
                var escaped = false
                while i < body.count, body[i] != quote {
                    if body[i] == backslash { escaped = true; i += 1 }
                    i += 1
                }
                guard i < body.count else { return nil }
                let end = i
                i += 1
                guard depth == 1, !escaped, body[start..<end].elementsEqual(key) else { continue }
                skipBlanks()
                guard i < body.count, body[i] == UInt8(ascii: ":") else { continue }
                i += 1
                skipBlanks()
                guard i < body.count, body[i] == quote else { return nil }
                let valueStart = i + 1
                var j = valueStart
                while j < body.count, body[j] != quote, body[j] != backslash { j += 1 }
                guard j < body.count, body[j] == quote, j > valueStart else { return nil }
                return String(validating: body[valueStart..<j], as: UTF8.self)
            default:
                i += 1
            }
        }
        return nil
    }

    // MARK: - Query string and form

    static func parseFields(_ fields: QueryString, limits: ProtocolLimits, now: Int64) throws(ProtocolError) -> DeviceFix {
        func value(_ name: String) -> String? {
            guard let text = fields[name], !text.isEmpty else { return nil }
            return text
        }
        func number(_ name: String) throws(ProtocolError) -> Double? {
            guard let text = value(name) else { return nil }
            guard let parsed = QueryString.number(text.trimmingCharacters(in: " ")), parsed.value.isFinite else {
                throw .badRequest("\(name) must be a number (got \(text.prefix(32)))")
            }
            return parsed.value
        }
        let device: String
        let deviceField: String
        if let id = value("id") {
            (device, deviceField) = (id, "id")
        } else if let id = value("deviceid") {
            (device, deviceField) = (id, "deviceid")
        } else {
            throw .badRequest("id (or deviceid) is required: the device's id")
        }
        try checkDevice(device, field: deviceField)

        let lat: Double
        let lon: Double
        if value("lat") != nil || value("lon") != nil {
            guard let latValue = try number("lat") else { throw .badRequest("lat is required with lon") }
            guard let lonValue = try number("lon") else { throw .badRequest("lon is required with lat") }
            (lat, lon) = (latValue, lonValue)
        } else if let location = value("location") {
            let parts = location.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2,
                let latValue = QueryString.number(String(parts[0]).trimmingCharacters(in: " "))?.value,
                let lonValue = QueryString.number(String(parts[1]).trimmingCharacters(in: " "))?.value,
                latValue.isFinite, lonValue.isFinite
            else {
                throw .badRequest("location must be LAT,LON (got \(location.prefix(64)))")
            }
            (lat, lon) = (latValue, lonValue)
        } else {
            throw .badRequest("lat and lon are required (or location=LAT,LON)")
        }
        let latField = value("lat") != nil ? "lat" : "location"
        try checkPosition(lat: lat, lon: lon, latField: latField, lonField: value("lon") != nil ? "lon" : "location")

        var ts = now
        if let text = value("timestamp") {
            guard let parsed = DeviceTimestamp.parse(text) else {
                throw .badRequest("timestamp must be Unix seconds, milliseconds, ISO 8601 with an offset or YYYY-MM-DD HH:MM:SS (got \(text.prefix(40)))")
            }
            ts = parsed
        }
        try DeviceFix.checkTimestamp(ts, field: "timestamp", limits: limits, now: now)

        let speed = DeviceFix.known(try number("speed")).map { $0 * metresPerSecondPerKnot }
        let bearing = try number("bearing")
        let heading = DeviceFix.heading(bearing != nil ? bearing : try number("heading"))
        let battery = DeviceFix.known(try number("batt"))
        if let battery, battery > 100 { throw .badRequest("batt must be a percentage from 0 to 100") }
        let fix = FixInput(
            lat: lat, lon: lon, ts: ts, speedMps: speed, heading: heading,
            accuracyM: DeviceFix.known(try number("accuracy")), altitudeM: try number("altitude"),
            batteryPercent: battery)
        return DeviceFix(device: device, fix: fix)
    }

    // MARK: - JSON (Traccar Client 9+)

    static func parseJSON(_ body: [UInt8], limits: ProtocolLimits, now: Int64) throws(ProtocolError) -> DeviceFix {
        let root: JSONValue
        do {
            root = try JSONParser(maxDepth: limits.maxNestingDepth).parse(body)
        } catch {
            throw ProtocolError(error.code, "body is not valid JSON: \(error.message)")
        }
        guard let object = root.objectValue else { throw .badRequest("body must be a JSON object") }
        guard let deviceValue = Fields.present(object["device_id"]) else {
            throw .badRequest("device_id is required: the device's id")
        }
        guard let device = deviceValue.stringValue else { throw .badRequest("device_id must be a string") }
        try checkDevice(device, field: "device_id")
        guard let locationValue = Fields.present(object["location"]) else { throw Fields.missing("location") }
        let location = try Fields.object(locationValue, "location")
        guard let coordsValue = Fields.present(location["coords"]) else { throw Fields.missing("location.coords") }
        let coords = try Fields.object(coordsValue, "location.coords")
        let lat = try Fields.requiredNumber(coords["latitude"], "location.coords.latitude", Fields.latitudeRequirement) { abs($0) <= 90 }
        let lon = try Fields.requiredNumber(coords["longitude"], "location.coords.longitude", Fields.longitudeRequirement) { abs($0) <= 180 }

        var ts = now
        if let stamp = Fields.present(location["timestamp"]) {
            let parsed: Int64?
            switch stamp {
            case .string(let text): parsed = DeviceTimestamp.parse(text)
            case .number(let number): parsed = number.value.isFinite && number.value >= 0 ? DeviceTimestamp.epochValue(number.value) : nil
            default: parsed = nil
            }
            guard let parsed else { throw .badRequest("location.timestamp must be an ISO 8601 time with an offset") }
            ts = parsed
        }
        try DeviceFix.checkTimestamp(ts, field: "location.timestamp", limits: limits, now: now)

        func number(_ name: String) throws(ProtocolError) -> Double? {
            try Fields.optionalNumber(coords[name], "location.coords." + name, "a finite number")
        }
        var battery: Double?
        if let batteryValue = Fields.present(location["battery"]) {
            let batteryObject = try Fields.object(batteryValue, "location.battery")
            if let level = DeviceFix.known(try Fields.optionalNumber(batteryObject["level"], "location.battery.level", "a finite number")) {
                guard level <= 1 else { throw .badRequest("location.battery.level must be from 0 to 1") }
                battery = (level * 1000).rounded() / 10
            }
        }
        let fix = FixInput(
            lat: lat, lon: lon, ts: ts, speedMps: DeviceFix.known(try number("speed")),
            heading: DeviceFix.heading(try number("heading")), accuracyM: DeviceFix.known(try number("accuracy")),
            altitudeM: try number("altitude"), batteryPercent: battery)
        return DeviceFix(device: device, fix: fix)
    }

    // MARK: - Checks

    static func checkDevice(_ id: String, field: String) throws(ProtocolError) {
        guard TripID.isValid(id) else {
            throw .badRequest("\(field): a device id is 1–64 characters from A-Z a-z 0-9 . _ : - (got \(id.prefix(64)))")
        }
    }

    static func checkPosition(lat: Double, lon: Double, latField: String, lonField: String) throws(ProtocolError) {
        guard abs(lat) <= 90 else { throw .badRequest("\(latField) must be \(Fields.latitudeRequirement)") }
        guard abs(lon) <= 180 else { throw .badRequest("\(lonField) must be \(Fields.longitudeRequirement)") }
    }
}

extension String {
    /// The string without leading and trailing characters of `set` (ASCII only).
    func trimmingCharacters(in set: String) -> String {
        let drop = Set(set.utf8)
        var s = Substring(self)
        while let first = s.utf8.first, drop.contains(first) { s = s.dropFirst() }
        while let last = s.utf8.last, drop.contains(last) { s = s.dropLast() }
        return String(s)
    }
}
