import TrackHubCore

/// A validated client message (PROTOCOL section 3).
public enum ClientMessage: Sendable, Equatable {
    /// `hello {token?}`.
    case hello(token: String?)
    /// `subscribe {trip, mode?, since_event?, stop?}` (`stop`: a waypoint id or
    /// `"destination"`, PROTOCOL 17; nil: the whole trip).
    case subscribe(trip: String, mode: SubscriptionMode, sinceEvent: Int64?, stop: StopRef? = nil)
    /// `unsubscribe {trip}`.
    case unsubscribe(trip: String)
    /// `fix {trip, lat, lon, ts, seq?, duration_ms?, speed_mps?, heading?, accuracy_m?, battery?}`.
    case fix(trip: String, fix: FixInput)
    /// `proceed {trip}`.
    case proceed(trip: String)
    /// `viewport {bbox, zoom}`: the normalised viewport, or nil for `bbox: null` (stop clusters).
    case viewport(Viewport?)
    /// `ping`.
    case ping

    /// The ops this version knows, as spelt on the wire.
    public static let knownOps: [String] = ["hello", "subscribe", "unsubscribe", "fix", "proceed", "viewport", "ping"]

    /// The wire name of the op.
    public var op: String {
        switch self {
        case .hello: return "hello"
        case .subscribe: return "subscribe"
        case .unsubscribe: return "unsubscribe"
        case .fix: return "fix"
        case .proceed: return "proceed"
        case .viewport: return "viewport"
        case .ping: return "ping"
        }
    }

    /// The trip the message is about, if any.
    public var trip: String? {
        switch self {
        case .subscribe(let trip, _, _, _), .unsubscribe(let trip), .fix(let trip, _), .proceed(let trip):
            return trip
        case .hello, .viewport, .ping:
            return nil
        }
    }

    /// Decodes one WebSocket text frame.
    ///
    /// - Parameters:
    ///   - bytes: the frame's payload.
    ///   - limits: size, nesting and clock-skew limits.
    ///   - now: the hub's clock, ms since the epoch (for `fix.ts`).
    /// - Returns: the message's `id` (to echo as `re`; recovered whenever the frame is a JSON
    ///   object with a valid `id`, even if the rest is invalid) and the message or the error.
    public static func decode(
        _ bytes: [UInt8], limits: ProtocolLimits = .default, now: Int64
    ) -> (id: MessageID?, result: Result<ClientMessage, ProtocolError>) {
        bytes.withUnsafeBytes { decode($0, limits: limits, now: now) }
    }

    /// Decodes one WebSocket text frame from raw memory (e.g. a libwebsockets receive buffer).
    public static func decode(
        _ bytes: UnsafeRawBufferPointer, limits: ProtocolLimits = .default, now: Int64
    ) -> (id: MessageID?, result: Result<ClientMessage, ProtocolError>) {
        guard bytes.count <= limits.maxMessageBytes else {
            return (nil, .failure(.tooLarge("message is \(bytes.count) bytes; the limit is \(limits.maxMessageBytes)")))
        }
        let value: JSONValue
        do {
            value = try JSONParser(maxDepth: limits.maxNestingDepth).parse(bytes)
        } catch {
            return (nil, .failure(error))
        }
        guard case .object(let object) = value else {
            return (nil, .failure(.badRequest("a message must be a JSON object with an op, not \(value.typeName)")))
        }
        let id: MessageID?
        switch messageID(object["id"], source: bytes) {
        case .success(let recovered): id = recovered
        case .failure(let error): return (nil, .failure(error))
        }
        do {
            return (id, .success(try decode(object: object, limits: limits, now: now)))
        } catch {
            return (id, .failure(error))
        }
    }

    /// Extracts a message id: a string, or a finite number kept as its literal (taken from
    /// `source` when the number was parsed from it). Absent or `null`: nil.
    static func messageID(_ value: JSONValue?, source: UnsafeRawBufferPointer?) -> Result<MessageID?, ProtocolError> {
        guard let value = Fields.present(value) else { return .success(nil) }
        switch value {
        case .string(let string):
            return .success(.string(string))
        case .number(let number) where number.isFinite:
            if let range = number.sourceRange, let source, range.upperBound <= source.count {
                return .success(.number(String(decoding: UnsafeRawBufferPointer(rebasing: source[range]), as: UTF8.self)))
            }
            return .success(.number(number.description))
        default:
            return .failure(.badRequest("id must be a string or a finite number"))
        }
    }

    /// Validates an already parsed message object (its `id` is not looked at).
    public static func decode(
        object: JSONObject, limits: ProtocolLimits = .default, now: Int64
    ) throws(ProtocolError) -> ClientMessage {
        guard let opValue = object["op"] else { throw .badRequest("op is required") }
        guard case .string(let op) = opValue else { throw .badRequest("op must be a string") }
        switch op {
        case "hello":
            return .hello(token: try Fields.optionalString(object["token"], "token"))
        case "subscribe":
            let trip = try Fields.requiredTripID(object["trip"])
            var mode = SubscriptionMode.frames
            if let modeValue = Fields.present(object["mode"]) {
                guard case .string(let name) = modeValue, let parsed = SubscriptionMode(rawValue: name) else {
                    throw .badRequest("mode must be \"frames\" or \"segments\"")
                }
                mode = parsed
            }
            let since = try Fields.optionalInteger(
                object["since_event"], "since_event", 0...FixInput.maxSeq,
                rangeMessage: "since_event must be an integer ≥ 0")
            // PROTOCOL 17: a stop is a waypoint id (the trip-id alphabet) or "destination".
            let stop = try Fields.optionalTripID(object["stop"], "stop").map(StopRef.init(wire:))
            return .subscribe(trip: trip, mode: mode, sinceEvent: since, stop: stop)
        case "unsubscribe":
            return .unsubscribe(trip: try Fields.requiredTripID(object["trip"]))
        case "fix":
            let trip = try Fields.requiredTripID(object["trip"])
            return .fix(trip: trip, fix: try FixInput.decode(from: object, limits: limits, now: now))
        case "proceed":
            return .proceed(trip: try Fields.requiredTripID(object["trip"]))
        case "viewport":
            return .viewport(try Viewport.decode(bbox: object["bbox"], zoom: object["zoom"]))
        case "ping":
            return .ping
        default:
            var writer = JSONWriter(capacity: op.utf8.count + 2)
            writer.string(String(op.prefix(64)))
            let quoted = String(decoding: writer.bytes, as: UTF8.self)
            throw .badRequest("unknown op \(quoted); known ops: \(knownOps.joined(separator: ", "))")
        }
    }
}
