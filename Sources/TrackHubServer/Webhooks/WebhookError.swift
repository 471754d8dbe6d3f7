/// Why webhooks could not start.
public enum WebhookError: Error, CustomStringConvertible {
    case client(String)
    case store(String)

    public var description: String {
        switch self {
        case .client(let why): return "webhooks: \(why)"
        case .store(let why): return "webhooks: \(why)"
        }
    }
}
