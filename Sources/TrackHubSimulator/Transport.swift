/// Where a simulation's actions go and its events come from: the hub over WebSockets and
/// HTTP (`HubTransport`), or a fake in tests. Implementations report events through the sink
/// given to `start`, from any thread.
public protocol SimulationTransport: AnyObject, Sendable {
    /// Starts the transport; `sink` receives every event from then on.
    /// - Throws: `SimulatorError.connection` when it cannot start.
    func start(sink: @escaping @Sendable (TransportEvent) -> Void) throws(SimulatorError)
    /// Carries out one rider's action.
    func perform(_ action: SimulationAction)
    /// Closes every connection and waits for in-flight requests to finish.
    func stop()
}
