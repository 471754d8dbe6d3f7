import TrackHubCore

/// The body of `POST /v1/trips/{id}/fixes` (PROTOCOL section 5): `{fixes: [fix, ...]}`,
/// checked whole before anything is stored; errors name `fixes[i].field`.
public struct FixBatchRequest: Sendable, Equatable {
    /// The fixes, in array order (may be empty).
    public var fixes: [FixInput]

    /// A batch of these fixes.
    public init(fixes: [FixInput]) {
        self.fixes = fixes
    }

    /// Decodes a body; `now` is the hub's clock in ms (for each `ts`).
    public static func decode(
        _ body: [UInt8], limits: ProtocolLimits = .default, now: Int64
    ) throws(ProtocolError) -> FixBatchRequest {
        try decode(object: RequestBody.object(body, limits: limits, emptyIsObject: true), limits: limits, now: now)
    }

    /// Decodes an already parsed body.
    public static func decode(
        _ value: JSONValue, limits: ProtocolLimits = .default, now: Int64
    ) throws(ProtocolError) -> FixBatchRequest {
        try decode(object: RequestBody.object(value), limits: limits, now: now)
    }

    static func decode(object: JSONObject, limits: ProtocolLimits, now: Int64) throws(ProtocolError) -> FixBatchRequest {
        guard let value = object["fixes"] else { throw Fields.missing("fixes") }
        let array = try Fields.array(value, "fixes")
        var fixes: [FixInput] = []
        fixes.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            let name = "fixes[\(index)]"
            let fixObject = try Fields.object(element, name)
            fixes.append(try FixInput.decode(from: fixObject, fieldPrefix: name + ".", limits: limits, now: now))
        }
        // After the fixes are checked: bad_request comes before too_large (PROTOCOL 4).
        if fixes.count > limits.maxFixesPerBatch {
            throw .tooLarge("fixes has \(fixes.count) fixes; the limit is \(limits.maxFixesPerBatch) per request")
        }
        return FixBatchRequest(fixes: fixes)
    }
}
