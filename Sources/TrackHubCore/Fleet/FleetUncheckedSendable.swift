/// Carries a raw pointer (or another non-`Sendable` value) into a
/// `DispatchQueue.concurrentPerform` body.
///
/// `@unchecked Sendable` because the fleet index uses it only where the threads touch
/// disjoint memory, or only read memory that no thread writes until they have all
/// finished (`concurrentPerform` returns only then); each use says which.
struct FleetUncheckedSendable<Value>: @unchecked Sendable {
    /// The value carried.
    let value: Value

    init(_ value: Value) { self.value = value }
}
