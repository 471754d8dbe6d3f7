/// What `--webhook`, `--webhook-secret`, `--webhook-events` and `--webhook-retry-base` set
/// (PROTOCOL 12; docs/webhooks.md).
public struct WebhookSettings: Sendable, Equatable {
    /// The URLs, as configured (also the metrics' `url` label), without repeats.
    public var urls: [String] = []
    /// The signing key: the secret's bytes, or a `whsec_` secret's decoded bytes.
    public var key: [UInt8] = []
    /// The secret as given, only so that no log line ever shows it (PROTOCOL 14).
    public var secret = ""
    /// Event names to send (section 4's); nil: all.
    public var eventNames: Set<String>?
    /// The first retry's delay; doubling from there up to 5 min. Tests shorten it.
    public var retryBaseMs: Int64 = 1000
    /// An answer must come within this (PROTOCOL 12: 10 s).
    public var timeoutMs = 10_000

    /// The event names of PROTOCOL 4, which `--webhook-events` may list.
    public static let knownEventNames: Set<String> = [
        "trip_created", "waypoint_reached", "waypoint_resumed", "arrived", "off_route", "back_on_route", "rerouted", "ended",
        "signal_lost", "signal_back", "battery_low",  // PROTOCOL 18
    ]

    /// No webhooks: add URLs and a secret to enable them.
    public init() {}

    /// True when at least one `--webhook` URL is set.
    public var isEnabled: Bool { !urls.isEmpty }
}
