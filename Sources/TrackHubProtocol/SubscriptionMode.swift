/// How a subscriber gets a trip's motion (PROTOCOL section 3, `subscribe`); the raw value is the wire spelling.
public enum SubscriptionMode: String, Sendable, Hashable, CaseIterable {
    /// One `frame` per tick while the marker moves (the default).
    case frames
    /// One `segment` per animation.
    case segments
}
