/// When a trip has nothing more to show a customer (PROTOCOL 13).
extension Trip {
    /// True once nobody should follow the rider any more: the trip ended, or it arrived and
    /// the marker has finished its way on to the destination (6.7), so the last frame, at the
    /// destination, is already out. A share link's subscriptions end here.
    public func isOverForCustomers(at now: Int64) -> Bool {
        if endedAt != nil { return true }
        return arrivedAt != nil && !isAnimating(at: now)
    }
}
