/// An HTTP request a rider wants made; its answer comes back with the same `id`.
public struct HTTPCall: Sendable, Equatable {
    /// The rider's own request number, from 1, which the `httpResponse` event carries back; -1
    /// for the runner's closing `DELETE`s, whose answers nobody waits for.
    public var id: Int
    /// The HTTP method (`GET`, `POST`, `PUT` or `DELETE`).
    public var method: String
    /// The path on the hub, query included (`/v1/trips/{id}/route`, `/v1/osmand?id=...`).
    public var path: String
    /// The JSON body; nil to send none.
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
    /// Open a customer's WebSocket, the rider's link number `link` (PROTOCOL 17: a customer
    /// following one stop), presenting `token` (a stop link's; nil: the simulator's `--token`).
    case openLink(link: Int, token: String?)
    /// Send one text frame on a customer's WebSocket.
    case sendLink(link: Int, text: String)
    /// Close a customer's WebSocket.
    case closeLink(link: Int)
}

/// What a transport reports back for a rider.
public enum TransportEvent: Sendable {
    /// The rider's WebSocket is open.
    case opened(rider: Int)
    /// The rider's WebSocket closed or could not open; `code` nil when no close frame came.
    case closed(rider: Int, code: UInt16?, reason: String)
    /// A text message from the hub on the rider's WebSocket (a reply, an ack or an event).
    case message(rider: Int, bytes: [UInt8])
    /// The answer to the rider's `HTTPCall` numbered `id`; `status` 0 when the request failed
    /// (the error text as `body`).
    case httpResponse(rider: Int, id: Int, status: Int, body: [UInt8])
    /// A customer's WebSocket (`CourierAction.openLink`) is open.
    case linkOpened(rider: Int, link: Int)
    /// A customer's WebSocket closed or could not open.
    case linkClosed(rider: Int, link: Int, code: UInt16?, reason: String)
    /// A text message from the hub on a customer's WebSocket.
    case linkMessage(rider: Int, link: Int, bytes: [UInt8])

    var rider: Int {
        switch self {
        case .opened(let rider), .closed(let rider, _, _), .message(let rider, _), .httpResponse(let rider, _, _, _): rider
        case .linkOpened(let rider, _), .linkClosed(let rider, _, _, _), .linkMessage(let rider, _, _): rider
        }
    }
}

/// An action for one rider.
public struct SimulationAction: Sendable, Equatable {
    /// The rider's number: its index in `Simulation.couriers`, from 0.
    public var rider: Int
    /// What that rider's transport should do.
    public var action: CourierAction
}
