/// The hub's side of the webhooks (PROTOCOL 12): the hooks the hub calls, all cheap and
/// non-blocking on the service thread; the work is `WebhookDispatcher`'s.
extension Hub {
    /// Starts the dispatcher when `--webhook` is set (in `start`, before the service thread runs).
    func startWebhooks() throws {
        guard config.webhooks.isEnabled else { return }
        let (keeper, scope) = commands.webhookPositions()
        let dispatcher = try WebhookDispatcher(settings: config.webhooks, store: storage.store, keeper: keeper, scope: scope)
        try dispatcher.start(lastEvents: trips.lastEventsSent)
        publisher.webhooks = dispatcher
    }

    /// Trips deleted by retention: their positions go (a new trip may take the id).
    func webhookTripsForgotten(_ ids: [String]) {
        publisher.webhooks?.tripsForgotten(ids)
    }

    /// The webhook lines of /metrics.
    var webhookMetricsText: String { publisher.webhooks?.metricsText() ?? "" }

    /// Stores the positions reached and stops (when the service thread ends).
    func stopWebhooks() {
        publisher.webhooks?.stop()
    }
}
