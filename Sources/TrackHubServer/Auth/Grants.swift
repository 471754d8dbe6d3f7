import TrackHubCore
import TrackHubProtocol

/// What a client may do (PROTOCOL section 2), from its token. Open mode grants everything.
struct Grants: Sendable, Equatable {
    enum Scope: String, Sendable { case courier, viewer, fleet, admin, share }
    var scopes: Set<Scope>
    /// Trip ids the token lists; nil: every trip ("*").
    var trips: Set<String>?
    /// Seconds since the epoch after which the token is no longer valid; nil: never (open mode).
    var expiresAt: Int64?
    /// Whether any valid token (or open mode) is present.
    var isAuthenticated: Bool
    /// The `jti` of a share token (PROTOCOL 13), by which it is revoked; nil for other tokens.
    var shareID: String?
    /// True once the connection's share link was revoked: every op that needs a token is then
    /// `unauthorized`, as with no token, but the connection is not closed for lacking one.
    var isRevoked = false
    /// The stop a share token's link follows (PROTOCOL 17: its `stop` claim); nil for a link
    /// for the whole trip and for other tokens.
    var shareStop: String?
    /// A share token's `visible_within_stops` claim (0 when absent).
    var visibleWithinStops = 0

    static let everything = Grants(scopes: [.courier, .viewer, .fleet, .admin], trips: nil, expiresAt: nil, isAuthenticated: true)
    static let nothing = Grants(scopes: [], trips: [], expiresAt: nil, isAuthenticated: false)

    init(scopes: Set<Scope>, trips: Set<String>?, expiresAt: Int64?, isAuthenticated: Bool, shareID: String? = nil) {
        self.scopes = scopes
        self.trips = trips
        self.expiresAt = expiresAt
        self.isAuthenticated = isAuthenticated
        self.shareID = shareID
    }

    init(claims: TokenClaims) {
        let scopes = Set(claims.scopes.compactMap { Scope(rawValue: $0.rawValue) })
        self.init(
            scopes: scopes, trips: claims.trips, expiresAt: claims.expiresAt, isAuthenticated: true,
            shareID: scopes.contains(.share) ? claims.jti : nil)
        if scopes.contains(.share) {
            shareStop = claims.stop
            visibleWithinStops = claims.visibleWithinStops
        }
    }

    /// What is left of a connection's grants once its share link is revoked: nothing, until a
    /// `hello` brings another token; the token's `exp` still closes the connection.
    func revoked() -> Grants {
        var left = Grants(scopes: [], trips: [], expiresAt: expiresAt, isAuthenticated: true)
        left.isRevoked = true
        return left
    }

    /// The one check of PROTOCOL 2's table: whether these grants allow an operation that
    /// needs `access` (on `trip`, for the per-trip kinds). Every WebSocket op and every
    /// `/v1` route is checked here.
    func permits(_ access: Access, trip: String?) -> Bool {
        switch access {
        case .anyone: return true
        case .anyToken: return isAuthenticated
        case .viewTrip: return allowsViewing(trip ?? "")
        case .followTrip: return allowsViewing(trip ?? "") || allowsCustomerView(trip ?? "")
        case .driveTrip: return allowsDriving(trip ?? "")
        case .fleet: return allowsFleet
        case .admin: return allowsAdministering
        case .device: return true
        }
    }

    private func lists(_ trip: String) -> Bool { trips == nil || trips?.contains(trip) == true }

    /// `subscribe`, `GET /v1/trips/{id}`, `GET .../trail`: viewer or courier, its trips.
    func allowsViewing(_ trip: String) -> Bool {
        scopes.contains(.admin) || ((scopes.contains(.viewer) || scopes.contains(.courier)) && lists(trip))
    }

    /// A share token's one trip, as a customer sees it (PROTOCOL 13): only a token that lists
    /// exactly that trip (a share token naming `*` or several trips sees none).
    func allowsCustomerView(_ trip: String) -> Bool {
        scopes.contains(.share) && trips?.count == 1 && trips?.contains(trip) == true
    }

    /// The stop link (PROTOCOL 17) this connection sees `trip` through: its stop and
    /// `visible_within_stops`, when it sees the trip only as a customer and its token names a
    /// stop; nil otherwise.
    func stopLink(_ trip: String) -> (stop: StopRef, visibleWithinStops: Int)? {
        guard let shareStop, seesAsCustomer(trip) else { return nil }
        return (StopRef(wire: shareStop), visibleWithinStops)
    }

    /// True when this connection sees `trip` only as a customer does: rider without id,
    /// no trail, no config, nothing once it arrived (PROTOCOL 13). A token that may also view
    /// the trip as a viewer (or admin) sees it whole.
    func seesAsCustomer(_ trip: String) -> Bool {
        !allowsViewing(trip) && allowsCustomerView(trip)
    }

    /// `fix`, `proceed`, `POST .../fixes`, `POST .../proceed`: courier, its trips.
    func allowsDriving(_ trip: String) -> Bool {
        scopes.contains(.admin) || (scopes.contains(.courier) && lists(trip))
    }

    /// `viewport`, `GET /v1/fleet/clusters`: fleet.
    var allowsFleet: Bool { scopes.contains(.admin) || scopes.contains(.fleet) }

    /// `POST /v1/trips`, `PUT .../route`, `DELETE /v1/trips/{id}`: admin.
    var allowsAdministering: Bool { scopes.contains(.admin) }

    /// Whether `GET /v1/trips` shows this trip: its trips, or every trip for admin and fleet.
    func allowsListing(_ trip: String) -> Bool {
        // A stop link (PROTOCOL 17) lists nothing: a list item is no stop link's view.
        if scopes.contains(.share), shareStop != nil, !allowsViewing(trip) { return false }
        return scopes.contains(.admin) || scopes.contains(.fleet) || lists(trip)
    }

    /// True once the token's `exp` (with the leeway) has passed; never in open mode.
    func isExpired(nowMs: Int64) -> Bool {
        guard let expiresAt else { return false }
        return JWT.isExpired(expiresAt: expiresAt, nowMs: nowMs)
    }
}

/// What an operation needs of the caller's token (PROTOCOL 2): one row of the table.
enum Access: Sendable {
    /// No token (also on a secured hub).
    case anyone
    /// Any valid token.
    case anyToken
    /// `viewer` or `courier` with the trip in `trips`.
    case viewTrip
    /// `viewTrip`, or `share` with the trip as its one trip (PROTOCOL 13): `subscribe` and
    /// `GET /v1/trips/{id}`, which a customer sees redacted.
    case followTrip
    /// `courier` with the trip in `trips`.
    case driveTrip
    /// `fleet`.
    case fleet
    /// `admin`.
    case admin
    /// A registered device, without a token: its id is its credential (PROTOCOL 11). Checked
    /// by the route itself (an unknown device is 404); a token is neither needed nor read.
    case device
}

extension ClientMessage {
    /// What this WebSocket op needs (PROTOCOL 2); `hello` and `ping` need no token.
    var access: (Access, trip: String?) {
        switch self {
        case .hello, .ping: return (.anyone, nil)
        case .unsubscribe: return (.anyToken, nil)
        case .subscribe(let trip, _, _, _): return (.followTrip, trip)
        case .fix(let trip, _), .proceed(let trip): return (.driveTrip, trip)
        case .viewport: return (.fleet, nil)
        }
    }
}
