import Foundation

/// Webhooks in a cluster (PROTOCOL 12): delivery positions in the shared Redis, and a lease
/// so that one node at a time delivers (every node applies every event; partition owners,
/// issue 20, would divide this).
extension RedisCommandLog {
    func webhookPositions() -> (keeper: any WebhookPositionKeeper, lease: WebhookLease?) {
        (RedisWebhookPositions(address: address), WebhookLease(address: address, nodeID: UUID().uuidString))
    }
}
