import CHiredis
import Glibc

/// One blocking connection to Redis (hiredis), used by one thread at a time.
///
/// Every call has a deadline (the socket timeout): a Redis that stops answering is an error
/// after `timeoutMs`, never a hang. After an `.io` error the connection is dead; make a new one.
public final class RedisConnection {
    private var context: UnsafeMutablePointer<redisContext>?
    /// The server this connection is to.
    public let address: RedisAddress

    /// Connects within `timeoutMs` (ms), which then bounds every read and write; TCP keepalive on.
    /// - Throws: `.connect` naming the address when it cannot be reached.
    public init(_ address: RedisAddress, timeoutMs: Int) throws(RedisError) {
        self.address = address
        let tv = timeval(tv_sec: timeoutMs / 1000, tv_usec: (timeoutMs % 1000) * 1000)
        guard let c = redisConnectWithTimeout(address.host, Int32(address.port), tv) else {
            throw .connect("\(address): out of memory")
        }
        if c.pointee.err != 0 {
            let why = Self.errorText(c)
            redisFree(c)
            throw .connect("\(address): \(why)")
        }
        redisSetTimeout(c, tv)
        redisEnableKeepAlive(c)
        context = c
    }

    deinit {
        if let context { redisFree(context) }
    }

    /// Sends one command and waits for its reply. An error reply is returned as `.error`.
    public func command(_ arguments: [[UInt8]]) throws(RedisError) -> RedisValue {
        try pipeline([arguments])[0]
    }

    /// Sends several commands in one write and reads their replies in order.
    public func pipeline(_ commands: [[[UInt8]]]) throws(RedisError) -> [RedisValue] {
        try send(commands)
        return try receive(commands.count)
    }

    /// Writes commands without waiting for their replies (`receive` reads them): a client
    /// of several nodes writes to every node before it waits for any.
    public func send(_ commands: [[[UInt8]]]) throws(RedisError) {
        guard let c = context else { throw .io("connection closed") }
        for arguments in commands {
            let status = Self.withArgv(arguments) { argc, argv, lengths in
                redisAppendCommandArgv(c, argc, argv, lengths)
            }
            if status != REDIS_OK { throw fail(c) }
        }
    }

    /// Reads the replies of `count` commands sent earlier, in order.
    public func receive(_ count: Int) throws(RedisError) -> [RedisValue] {
        guard let c = context else { throw .io("connection closed") }
        var replies: [RedisValue] = []
        replies.reserveCapacity(count)
        for _ in 0..<count {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(c, &raw) == REDIS_OK, let raw else { throw fail(c) }
            let reply = raw.assumingMemoryBound(to: redisReply.self)
            replies.append(Self.value(of: reply))
            freeReplyObject(raw)
        }
        return replies
    }

    /// Marks the connection dead and describes why.
    private func fail(_ c: UnsafeMutablePointer<redisContext>) -> RedisError {
        let why = Self.errorText(c)
        redisFree(c)
        context = nil
        return .io(why)
    }

    private static func errorText(_ c: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: c.pointee.errstr) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return bytes.isEmpty ? "error \(c.pointee.err)" : String(decoding: bytes, as: UTF8.self)
        }
    }

    private static func value(of reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        let r = reply.pointee
        switch Int(r.type) {
        case trackhub_redis_reply_string:
            return .string(Array(UnsafeRawBufferPointer(start: r.str, count: Int(r.len))))
        case trackhub_redis_reply_status:
            return .status(String(decoding: UnsafeRawBufferPointer(start: r.str, count: Int(r.len)), as: UTF8.self))
        case trackhub_redis_reply_error:
            return .error(String(decoding: UnsafeRawBufferPointer(start: r.str, count: Int(r.len)), as: UTF8.self))
        case trackhub_redis_reply_integer:
            return .integer(r.integer)
        case trackhub_redis_reply_array:
            var items: [RedisValue] = []
            items.reserveCapacity(Int(r.elements))
            for i in 0..<Int(r.elements) {
                if let element = r.element[i] { items.append(value(of: element)) } else { items.append(.null) }
            }
            return .array(items)
        default:
            return .null
        }
    }

    /// Calls `body` with C argv/argvlen arrays pointing at the arguments' bytes.
    private static func withArgv(
        _ arguments: [[UInt8]],
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Int32
    ) -> Int32 {
        // One contiguous buffer holding every argument; argv points into it.
        let total = arguments.reduce(0) { $0 + $1.count } + 1
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: total) { buffer in
            var argv: [UnsafePointer<CChar>?] = []
            var lengths: [Int] = []
            argv.reserveCapacity(arguments.count)
            lengths.reserveCapacity(arguments.count)
            var offset = 0
            let base = buffer.baseAddress!
            for argument in arguments {
                argument.withUnsafeBufferPointer { src in
                    if let s = src.baseAddress { (base + offset).initialize(from: s, count: src.count) }
                }
                argv.append(UnsafeRawPointer(base + offset).assumingMemoryBound(to: CChar.self))
                lengths.append(argument.count)
                offset += argument.count
            }
            return argv.withUnsafeMutableBufferPointer { a in
                lengths.withUnsafeBufferPointer { l in body(Int32(arguments.count), a.baseAddress!, l.baseAddress!) }
            }
        }
    }
}

extension Array where Element == UInt8 {
    /// A Redis argument from text.
    public init(redis text: String) { self = Array(text.utf8) }
}
