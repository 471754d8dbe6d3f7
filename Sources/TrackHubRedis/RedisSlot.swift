/// Redis Cluster's key → hash slot rule: CRC16 (XMODEM) of the key, or of its hash tag (the
/// part between the first `{` and the next `}`, when that is not empty), modulo 16 384.
/// Keys with the same tag share a slot, so one node holds them all and a command may name
/// several (`trackhub:{p3}:log` and `trackhub:{p3}:lease`).
public enum RedisSlot {
    /// Hash slots of a Redis Cluster; a slot is `0..<count`.
    public static let count = 16_384

    /// The slot of `key`, `0..<count`: its hash tag's when it has one.
    public static func of(_ key: [UInt8]) -> Int {
        let hashed = hashTag(key) ?? key[...]
        return Int(crc16(hashed) % UInt16(count))
    }

    /// The slot of `key`'s UTF-8 bytes.
    public static func of(_ key: String) -> Int { of(Array(key.utf8)) }

    /// The bytes between the first `{` and the first `}` after it, when there are any.
    static func hashTag(_ key: [UInt8]) -> ArraySlice<UInt8>? {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")),
            let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
        else { return nil }
        return key[(open + 1)..<close]
    }

    /// CRC-16/XMODEM (polynomial 0x1021, initial value 0), bit by bit: keys are short.
    public static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }

    /// The key a command is routed by: the first key it names, or nil for a command that
    /// names none (`TIME`, `PING`). Knows the shapes this project sends: most commands
    /// take their key first; `EVAL`/`EVALSHA` after the script and the key count; `XREAD`
    /// after `STREAMS` (in a cluster every key of one command must share a slot).
    public static func routingKey(of command: [[UInt8]]) -> [UInt8]? {
        guard let name = command.first.map({ String(decoding: $0, as: UTF8.self).uppercased() }) else { return nil }
        switch name {
        case "TIME", "PING", "CLUSTER", "ASKING", "INFO", "READONLY":
            return nil
        case "EVAL", "EVALSHA":
            guard command.count > 3, let keys = Int(String(decoding: command[2], as: UTF8.self)), keys > 0 else { return nil }
            return command[3]
        case "XREAD", "XREADGROUP":
            guard let streams = command.firstIndex(where: { String(decoding: $0, as: UTF8.self).uppercased() == "STREAMS" }),
                streams + 1 < command.count
            else { return nil }
            return command[streams + 1]
        default:
            return command.count > 1 ? command[1] : nil
        }
    }
}
