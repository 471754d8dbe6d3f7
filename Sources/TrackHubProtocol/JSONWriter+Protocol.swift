import TrackHubCore

/// What the wire adds to `JSONWriter` (TrackHubCore): its own value types.
extension JSONWriter {
    /// Writes a `JSONNumber` (integers as integers).
    public mutating func number(_ value: JSONNumber) {
        if value.isInteger, let integer = value.int64Value {
            int(integer)
        } else {
            double(value.value)
        }
    }

    /// Writes any JSON value.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let bool): self.bool(bool)
        case .number(let number): self.number(number)
        case .string(let string): self.string(string)
        case .array(let array):
            beginArray()
            for element in array { self.value(element) }
            endArray()
        case .object(let object):
            beginObject()
            for (key, member) in object {
                self.key(key)
                self.value(member)
            }
            endObject()
        }
    }

    /// Writes a message id as given (a string, or a number's original literal).
    public mutating func messageID(_ id: MessageID) {
        switch id {
        case .string(let string):
            self.string(string)
        case .number(let literal):
            if JSONParser.parseNumber(literal) != nil {
                raw(literal)
            } else {
                string(literal)
            }
        }
    }

    /// Writes `"key":value` for any JSON value.
    public mutating func field(_ key: StaticString, _ value: JSONValue) { self.key(key); self.value(value) }
    /// Writes `"re":id` when there is an id; nothing otherwise.
    public mutating func reField(_ id: MessageID?) {
        guard let id else { return }
        key("re")
        messageID(id)
    }
}
