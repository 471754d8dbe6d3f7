/// What a client may do (PROTOCOL section 2). Open mode grants everything.
struct Grants: Sendable, Equatable {
    enum Scope: String, Sendable { case courier, viewer, fleet, admin }
    var scopes: Set<Scope>
    /// Trip ids the token lists; nil: every trip ("*").
    var trips: Set<String>?
    /// Seconds since the epoch after which the token is no longer valid; nil: never (open mode).
    var expiresAt: Int64?
    /// Whether any valid token (or open mode) is present.
    var isAuthenticated: Bool

    static let everything = Grants(scopes: [.courier, .viewer, .fleet, .admin], trips: nil, expiresAt: nil, isAuthenticated: true)
    static let nothing = Grants(scopes: [], trips: [], expiresAt: nil, isAuthenticated: false)

    func covers(trip: String) -> Bool {
        if scopes.contains(.admin) || scopes.contains(.fleet) { return true }
        guard let trips else { return true }
        return trips.contains(trip)
    }

    func may(_ scope: Scope, trip: String? = nil) -> Bool {
        if scopes.contains(.admin) { return true }
        guard scopes.contains(scope) else { return false }
        if let trip { return covers(trip: trip) }
        return true
    }

    func mayView(trip: String) -> Bool {
        if scopes.contains(.admin) { return true }
        guard scopes.contains(.viewer) || scopes.contains(.courier) else { return false }
        return trips == nil || trips?.contains(trip) == true
    }
}
