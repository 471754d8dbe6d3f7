import Foundation
import TrackHubCrypto
import TrackHubProtocol

/// The `webhook-signature` header (PROTOCOL 12, Standard Webhooks):
/// `v1,<base64 of HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>`.
enum WebhookSignature {
    /// The header's value; nil only if libcrypto fails.
    /// - Parameter timestamp: Unix seconds of this attempt (also the `webhook-timestamp` header).
    static func header(key: [UInt8], payload: WebhookPayload, timestamp: Int64) -> String? {
        guard let mac = HMACSHA256.mac(key: key, data: payload.signedContent(timestamp: timestamp)) else { return nil }
        return "v1," + Data(mac).base64EncodedString()
    }
}
