import Foundation

/// Webhooks in a cluster (PROTOCOL 12 and 15): delivery positions in the shared Redis; each
/// partition's owner delivers its trips' events (`WebhookScope`).
extension RedisCommandLog {
    func webhookPositions() -> (keeper: any WebhookPositionKeeper, scope: WebhookScope?) {
        (RedisWebhookPositions(seeds: seeds), state.webhookScope)
    }

    /// The partitions this node owns and has applied: whose webhooks it delivers.
    func updateWebhookScope() {
        var delivered = Set<Int>()
        for (p, part) in state.parts.enumerated() where part.owned && part.phase == .applied { delivered.insert(p) }
        state.webhookScope.set(delivered)
    }
}
