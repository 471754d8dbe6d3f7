/// An HTTP request a rider wants made; its answer comes back with the same `id`.
public struct HTTPCall: Sendable, Equatable {
    public var id: Int
    public var method: String
    public var path: String
    public var body: [UInt8]?
}

/// What a rider asks its transport to do. The engine only describes effects; the runner
/// carries them out, so the engine never sees a socket.
public enum CourierAction: Sendable, Equatable {
    /// Open the rider's WebSocket.
    case connect
    /// Send one text frame on it.
    case send(String)
    /// Make an HTTP request.
    case http(HTTPCall)
    /// Close the rider's WebSocket (the rider is done).
    case disconnect
}

/// What a transport reports back for a rider.
public enum TransportEvent: Sendable {
    case opened(rider: Int)
    case closed(rider: Int, code: UInt16?, reason: String)
    case message(rider: Int, bytes: [UInt8])
    case httpResponse(rider: Int, id: Int, status: Int, body: [UInt8])

    var rider: Int {
        switch self {
        case .opened(let rider), .closed(let rider, _, _), .message(let rider, _), .httpResponse(let rider, _, _, _): rider
        }
    }
}

/// An action for one rider.
public struct SimulationAction: Sendable, Equatable {
    public var rider: Int
    public var action: CourierAction
}
