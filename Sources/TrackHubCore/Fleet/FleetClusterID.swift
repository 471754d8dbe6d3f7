/// Stable ids of clusters, derived from their member sets.
///
/// Each trip id is hashed with 64-bit FNV-1a over its UTF-8 bytes, then scrambled with
/// a murmur3-style finaliser so that every bit depends on every byte. A cluster's key is
/// the wrapping sum of its members' hashes: independent of order, cheap to combine
/// when clusters merge, and the same whenever the member set is the same.
enum FleetClusterID {
    /// The 64-bit member hash of a trip id (FNV-1a 64, then finalised).
    static func memberHash(_ id: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            h ^= UInt64(byte)
            h = h &* 0x0000_0100_0000_01b3
        }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h = h &* 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }

    /// The wire id of a cluster with the given key: `#` and 16 lowercase hex digits.
    static func render(_ key: UInt64) -> String {
        String(unsafeUninitializedCapacity: 17) { bytes in
            write(key, into: bytes.baseAddress!)
            return 17
        }
    }

    /// Writes the 17 bytes of `render(key)` at `bytes`.
    static func write(_ key: UInt64, into bytes: UnsafeMutablePointer<UInt8>) {
        bytes[0] = UInt8(ascii: "#")
        var v = key
        for i in stride(from: 16, through: 1, by: -1) {
            let d = UInt8(truncatingIfNeeded: v & 0xf)
            bytes[i] = d < 10 ? UInt8(ascii: "0") + d : UInt8(ascii: "a") + d - 10
            v >>= 4
        }
    }

    /// The key of a rendered cluster id, or `nil` when `id` is not one.
    static func parse(_ id: String) -> UInt64? {
        let utf8 = id.utf8
        guard utf8.count == 17, utf8.first == UInt8(ascii: "#") else { return nil }
        var v: UInt64 = 0
        for c in utf8.dropFirst() {
            let d: UInt64
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt64(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt64(c - UInt8(ascii: "a") + 10)
            default: return nil
            }
            v = v << 4 | d
        }
        return v
    }
}
