import Foundation

/// The signing key of `--webhook-secret` (PROTOCOL 12): a secret written `whsec_<base64>`, as
/// Standard Webhooks libraries make them, is those decoded bytes; any other is its UTF-8 bytes.
public enum WebhookSecret {
    /// A secret written `whsec_<base64>` (as Standard Webhooks libraries make them) signs with the decoded bytes.
    public static let prefix = "whsec_"

    /// The key bytes; nil when a `whsec_` secret's rest is not base64 or is empty, or the
    /// secret is empty.
    public static func key(_ secret: String) -> [UInt8]? {
        guard secret.hasPrefix(prefix) else { return secret.isEmpty ? nil : Array(secret.utf8) }
        guard let data = Data(base64Encoded: String(secret.dropFirst(prefix.count))), !data.isEmpty else { return nil }
        return Array(data)
    }
}
