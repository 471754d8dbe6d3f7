import CCrypto

/// HMAC-SHA256 from OpenSSL's libcrypto, and a constant-time comparison (`CRYPTO_memcmp`):
/// what JWTs (PROTOCOL 2) and webhook signatures (PROTOCOL 12) are signed with. An edge
/// target of its own, so the hub's logic (TrackHubServer) imports no C module.
public enum HMACSHA256 {
    /// The length of a MAC, in bytes.
    public static let byteCount = 32

    /// The 32-byte MAC of `data` under `key`; nil only if libcrypto fails.
    public static func mac(key: [UInt8], data: some Collection<UInt8>) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: byteCount)
        let message = Array(data)
        guard key.count <= Int(Int32.max) else { return nil }
        let ok = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                out.withUnsafeMutableBufferPointer { outBytes in
                    trackhub_hmac_sha256(keyBytes.baseAddress, Int32(keyBytes.count), messageBytes.baseAddress, messageBytes.count, outBytes.baseAddress)
                }
            }
        }
        return ok == 1 ? out : nil
    }

    /// Whether `a` and `b` are equal, in time that depends only on their lengths.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in
                trackhub_memcmp_consttime(left.baseAddress, right.baseAddress, left.count) == 0
            }
        }
    }
}
