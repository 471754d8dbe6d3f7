import Foundation

/// The JWT secret(s) of `--jwt-secret` / `--jwt-secret-file` (PROTOCOL 14): one secret, or
/// two separated by a comma while a secret is rotated (tokens signed with either verify;
/// new tokens are signed with the first).
public enum SecretList {
    /// Below this many bytes a secret is accepted with a warning (HS256's key is 32 bytes).
    public static let recommendedBytes = 32
    /// Below this many bytes a secret is refused (PROTOCOL 14): it could be guessed, and the
    /// log's redaction of every literal secret would blank out common words and letters.
    public static let minimumBytes = 16

    /// Splits `text` into one or two secrets; `label` names the flag in errors.
    public static func split(_ text: String, label: String) throws(UsageError) -> [String] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2 else {
            throw UsageError("\(label): at most two secrets separated by a comma (the current one, then the one being retired)")
        }
        guard !parts.contains(where: \.isEmpty) else {
            throw UsageError("\(label): an empty secret would sign tokens with no key")
        }
        if let short = parts.first(where: { $0.utf8.count < minimumBytes }) {
            // The length only: the secret itself is never printed.
            throw UsageError("\(label): a secret must have at least \(minimumBytes) bytes (one has \(short.utf8.count)); use e.g. openssl rand -hex 32")
        }
        return parts
    }

    /// The text of a secret file without its one trailing newline (`\n` or `\r\n`), which
    /// editors and `echo` add and which is not part of the secret.
    public static func read(file path: String, label: String) throws(UsageError) -> String {
        var bytes = try ReadableFile.bytes(path, label: label)
        if bytes.last == 0x0A {
            bytes.removeLast()
            if bytes.last == 0x0D { bytes.removeLast() }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw UsageError("\(label): \(path) is not UTF-8 text") }
        return text
    }
}
