/// One Redis reply, copied out of hiredis's reply object (so nothing here points into C memory).
public enum RedisValue: Sendable, Equatable {
    /// A bulk string: any bytes.
    case string([UInt8])
    /// An integer reply (`INCR`, `XLEN`, …).
    case integer(Int64)
    /// A multi-bulk reply, e.g. `EXEC`'s replies or `XREAD`'s streams.
    case array([RedisValue])
    /// A nil reply: a missing key, or a blocking read that timed out.
    case null
    /// A simple status reply such as `OK`.
    case status(String)
    /// An error reply (`-ERR ...`): the command was refused, the connection is fine.
    case error(String)

    /// The bytes of a bulk string or status, else nil.
    public var bytes: [UInt8]? {
        switch self {
        case .string(let b): return b
        case .status(let s): return Array(s.utf8)
        default: return nil
        }
    }

    /// A bulk string or status as text, else nil.
    public var text: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// An integer reply, or a bulk string holding one (TIME answers strings).
    public var int: Int64? {
        switch self {
        case .integer(let i): return i
        case .string, .status: return text.flatMap { Int64($0) }
        default: return nil
        }
    }

    /// The items of an array reply, else nil.
    public var elements: [RedisValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
}

/// Why a Redis call did not give a reply.
public enum RedisError: Error, Sendable, CustomStringConvertible {
    /// The connection could not be made.
    case connect(String)
    /// The connection broke or timed out; it cannot be used again.
    case io(String)
    /// Redis refused the command (an error reply), e.g. a wrong type.
    case refused(String)

    /// One line for errors and logs: what failed and Redis's or hiredis's reason.
    public var description: String {
        switch self {
        case .connect(let why): return "cannot connect to Redis: \(why)"
        case .io(let why): return "Redis connection lost: \(why)"
        case .refused(let why): return "Redis refused: \(why)"
        }
    }
}
