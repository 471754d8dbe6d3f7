/// Parsing shared by the HTTP body decoders.
enum RequestBody {
    /// Parses a body that must be a JSON object; an empty (or all-whitespace) body is `{}`
    /// when `emptyIsObject`.
    static func object(_ body: [UInt8], limits: ProtocolLimits, emptyIsObject: Bool) throws(ProtocolError) -> JSONObject {
        if emptyIsObject && body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            return JSONObject()
        }
        let value = try JSONParser(maxDepth: limits.maxNestingDepth).parse(body)
        return try object(value)
    }

    static func object(_ value: JSONValue) throws(ProtocolError) -> JSONObject {
        guard case .object(let object) = value else {
            throw .badRequest("the request body must be a JSON object, not \(value.typeName)")
        }
        return object
    }
}
