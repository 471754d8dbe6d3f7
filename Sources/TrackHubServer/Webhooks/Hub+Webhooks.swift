/// The hub's side of the webhooks (PROTOCOL 12): the hooks the hub calls, all cheap and
/// non-blocking on the service thread; the work is `WebhookDispatcher`'s.
extension Hub {
    /// Starts the dispatcher when `--webhook` is set (in `start`, before the service thread
    /// runs), posting with the client `transport` makes (nil: libcurl's).
    func startWebhooks(transport: ((_ connections: Int) throws -> any WebhookTransport)?) throws {
        guard config.webhooks.isEnabled else { return }
        let (keeper, scope) = commands.webhookPositions()
        let dispatcher = try WebhookDispatcher(settings: config.webhooks, store: services.storage.store, keeper: keeper, scope: scope, transport: transport)
        try dispatcher.start(lastEvents: services.trips.lastEventsSent)
        services.publisher.webhooks = dispatcher
    }

    /// Trips deleted by retention: their positions go (a new trip may take the id).
    func webhookTripsForgotten(_ ids: [String]) {
        services.publisher.webhooks?.tripsForgotten(ids)
    }

    /// The webhook lines of /services.metrics.
    var webhookMetricsText: String { services.publisher.webhooks?.metricsText() ?? "" }

    /// Stores the positions reached and stops (when the service thread ends).
    func stopWebhooks() {
        services.publisher.webhooks?.stop()
    }
}
