/// Why webhooks could not start.
public enum WebhookError: Error, CustomStringConvertible {
    case client(String)
    case store(String)

    /// The one-line start-up error.
    public var description: String {
        switch self {
        case .client(let why): return "webhooks: \(why)"
        case .store(let why): return "webhooks: \(why)"
        }
    }
}
