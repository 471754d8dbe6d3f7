/// The value of `--router` (PROTOCOL 16): `routino:DIR`, the only backend so far.
public enum RouterSpec: Sendable, Equatable {
    case routino(directory: String)

    /// Parses `routino:DIR`; the error names the flag and what it takes.
    public static func parse(_ text: String) -> Result<RouterSpec, RouterSpecError> {
        guard let colon = text.firstIndex(of: ":") else {
            return .failure(RouterSpecError(message: "--router takes routino:DIR (a Routino database directory), not \(text)"))
        }
        let kind = text[..<colon], rest = String(text[text.index(after: colon)...])
        guard kind == "routino" else {
            return .failure(RouterSpecError(message: "--router: unknown router \(kind) (only routino:DIR)"))
        }
        guard !rest.isEmpty else {
            return .failure(RouterSpecError(message: "--router routino:DIR needs a directory"))
        }
        return .success(.routino(directory: rest))
    }
}

/// A `--router` value that does not parse, or a database that does not load.
public struct RouterSpecError: Error, Sendable, Equatable {
    /// One line naming `--router` and what is wrong, printed as `trackhub serve`'s error (exit 2).
    public var message: String
    /// An error with this line.
    public init(message: String) { self.message = message }
}
