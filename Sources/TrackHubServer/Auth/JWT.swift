import TrackHubCore
import TrackHubCrypto
import TrackHubProtocol

/// A scope a token may carry (PROTOCOL section 2).
public enum TokenScope: String, Sendable, CaseIterable, Hashable {
    case courier, viewer, fleet, admin
    /// A customer's share link (PROTOCOL 13): its one trip, as a customer sees it.
    case share
}

/// The claims of a verified token that the hub acts on; other claims are ignored.
public struct TokenClaims: Sendable, Equatable {
    /// `sub`: who (courier id, user id).
    public var subject: String?
    /// `exp`, seconds since the epoch (a fractional `exp` is rounded down).
    public var expiresAt: Int64
    /// `scope`; unknown scope names are ignored (they grant nothing).
    public var scopes: Set<TokenScope>
    /// `trips`; nil for `["*"]` (every trip).
    public var trips: Set<String>?
    /// `jti`: the token's own id; a share link's, by which it is revoked (PROTOCOL 13).
    public var jti: String?
    /// `stop`: the stop a link for one stop follows (PROTOCOL 17), a waypoint id or
    /// `"destination"`; nil: the whole trip.
    public var stop: String?
    /// `visible_within_stops`: from how many stops before its own the link shows the courier
    /// (PROTOCOL 17); 0 when the token does not carry it.
    public var visibleWithinStops: Int

    /// Claims to mint (`trackhub token`, a share link); `expiresAt` in Unix seconds.
    public init(subject: String?, expiresAt: Int64, scopes: Set<TokenScope>, trips: Set<String>?, jti: String? = nil,
                stop: String? = nil, visibleWithinStops: Int = 0) {
        self.subject = subject
        self.expiresAt = expiresAt
        self.scopes = scopes
        self.trips = trips
        self.jti = jti
        self.stop = stop
        self.visibleWithinStops = visibleWithinStops
    }
}

/// Why a token was rejected. `message` names the offending part, for the `unauthorized` error.
public struct TokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the token was refused, for the `unauthorized` error (never the token itself).
    public var message: String
    init(_ message: String) { self.message = message }
    /// The refusal's message.
    public var description: String { message }
    /// A signature made with another secret: during a rotation the next secret may match.
    static let badSignature = TokenError("token signature is not valid")
}

/// JSON Web Tokens signed with HS256 (RFC 7519 / 7515), the only kind the hub accepts.
///
/// Verification order: shape and size, header (`alg` must be exactly `HS256`; `crit` is
/// refused), then the HMAC-SHA256 signature compared in constant time, and only then the
/// payload's claims (`exp` required, 30 s leeway). Nothing in the payload is looked at
/// before the signature has been checked.
public enum JWT {
    /// Seconds of leeway on `exp` (PROTOCOL section 2).
    public static let leewaySeconds: Int64 = 30
    /// Longest token accepted, in bytes: a bound on the work an anonymous client can cause.
    public static let maxTokenBytes = 8 * 1024
    /// `exp` values beyond this (year ~33 000) are taken as this, so millisecond arithmetic cannot overflow.
    static let maxExpSeconds: Double = 1e12
    /// The largest `visible_within_stops` claim accepted (PROTOCOL 17's 0–100).
    static let maxVisibleWithinStops = Int(ShareRequest.maxVisibleWithinStops)

    /// Verifies `token` against `secret` at `nowMs` (ms since the epoch).
    public static func verify(_ token: String, secret: String, nowMs: Int64) -> Result<TokenClaims, TokenError> {
        verify(token, secret: Array(secret.utf8), nowMs: nowMs)
    }

    /// Checks an HS256 token against one secret at `nowMs` (30 s of leeway on `exp`, PROTOCOL 2): its claims, or why it is refused.
    public static func verify(_ token: String, secret: [UInt8], nowMs: Int64) -> Result<TokenClaims, TokenError> {
        let utf8 = token.utf8
        guard !utf8.isEmpty else { return .failure(TokenError("token is empty")) }
        guard utf8.count <= maxTokenBytes else { return .failure(TokenError("token is longer than \(maxTokenBytes) bytes")) }
        let parts = Substring(token).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            return .failure(TokenError("token is not a JWT (header.payload.signature)"))
        }
        guard let headerBytes = Base64URL.decode(parts[0].utf8),
              let payloadBytes = Base64URL.decode(parts[1].utf8),
              let signature = Base64URL.decode(parts[2].utf8) else {
            return .failure(TokenError("token is not valid base64url"))
        }
        // The header decides how to check the signature: only HS256 is accepted.
        guard let header = try? JSONParser(maxDepth: 8).parse(headerBytes), case .object(let headerObject) = header else {
            return .failure(TokenError("token header is not a JSON object"))
        }
        guard case .string(let alg)? = headerObject["alg"] else {
            return .failure(TokenError("token header has no alg"))
        }
        guard alg == "HS256" else { return .failure(TokenError("token alg \(alg) is not HS256")) }
        if headerObject["crit"] != nil { return .failure(TokenError("token header crit is not supported")) }

        let signingInput = token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)
        guard let expected = HMACSHA256.mac(key: secret, data: signingInput) else {
            return .failure(TokenError("token signature could not be computed"))
        }
        // Compared whole and in constant time; a signature of another length is simply wrong.
        let padded = signature.count == expected.count ? signature : [UInt8](repeating: 0, count: expected.count)
        let equal = HMACSHA256.constantTimeEqual(padded, expected)
        guard equal && signature.count == expected.count else {
            return .failure(.badSignature)
        }

        guard let payload = try? JSONParser().parse(payloadBytes), case .object(let claims) = payload else {
            return .failure(TokenError("token payload is not a JSON object"))
        }
        guard let expValue = claims["exp"] else { return .failure(TokenError("token has no exp")) }
        guard case .number(let expNumber) = expValue, expNumber.value.isFinite else {
            return .failure(TokenError("token exp is not a number"))
        }
        let expSeconds = Int64(min(max(expNumber.value, -maxExpSeconds), maxExpSeconds).rounded(.down))
        if isExpired(expiresAt: expSeconds, nowMs: nowMs) {
            return .failure(TokenError("token expired (exp \(expSeconds))"))
        }
        var subject: String?
        switch claims["sub"] {
        case nil, .null?: subject = nil
        case .string(let text)?: subject = text
        default: return .failure(TokenError("token sub is not a string"))
        }
        var jti: String?
        switch claims["jti"] {
        case nil, .null?: jti = nil
        case .string(let text)?: jti = text
        default: return .failure(TokenError("token jti is not a string"))
        }
        var scopes: Set<TokenScope> = []
        switch claims["scope"] {
        case nil, .null?: break
        case .array(let items)?:
            for item in items {
                guard case .string(let name) = item else { return .failure(TokenError("token scope must be an array of strings")) }
                if let scope = TokenScope(rawValue: name) { scopes.insert(scope) }
            }
        default: return .failure(TokenError("token scope must be an array of strings"))
        }
        var trips: Set<String>? = []
        switch claims["trips"] {
        case nil, .null?: break
        case .array(let items)?:
            for item in items {
                guard case .string(let id) = item else { return .failure(TokenError("token trips must be an array of strings")) }
                if id == "*" {
                    trips = nil
                } else if trips != nil {
                    trips?.insert(id)
                }
            }
        default: return .failure(TokenError("token trips must be an array of strings"))
        }
        var stop: String?
        switch claims["stop"] {
        case nil, .null?: stop = nil
        case .string(let text)?: stop = text
        default: return .failure(TokenError("token stop is not a string"))
        }
        var visibleWithinStops = 0
        switch claims["visible_within_stops"] {
        case nil, .null?: break
        case .number(let number)?:
            let value = number.value
            guard value.rounded(.towardZero) == value, value >= 0, value <= Double(maxVisibleWithinStops) else {
                return .failure(TokenError("token visible_within_stops is not an integer from 0 to \(maxVisibleWithinStops)"))
            }
            visibleWithinStops = Int(value)
        default: return .failure(TokenError("token visible_within_stops is not an integer from 0 to \(maxVisibleWithinStops)"))
        }
        return .success(TokenClaims(subject: subject, expiresAt: expSeconds, scopes: scopes, trips: trips, jti: jti,
                                    stop: stop, visibleWithinStops: visibleWithinStops))
    }

    /// True once `exp` plus the leeway has passed.
    public static func isExpired(expiresAt: Int64, nowMs: Int64) -> Bool {
        let limitMs = (expiresAt + leewaySeconds).multipliedReportingOverflow(by: 1000)
        if limitMs.overflow { return expiresAt < 0 }
        return nowMs > limitMs.partialValue
    }

    /// Signs `claims` with HS256 under `secret` (what `trackhub token` prints).
    /// `issuedAt` (seconds) goes in `iat`.
    public static func mint(_ claims: TokenClaims, secret: String, issuedAt: Int64? = nil) -> String {
        var payload = JSONWriter(headroom: 0, capacity: 256)
        payload.beginObject()
        if let subject = claims.subject { payload.field("sub", subject) }
        if let issuedAt { payload.field("iat", issuedAt) }
        if let jti = claims.jti { payload.field("jti", jti) }
        payload.field("exp", claims.expiresAt)
        if let stop = claims.stop {
            payload.field("stop", stop)
            payload.field("visible_within_stops", Int64(claims.visibleWithinStops))
        }
        payload.key("scope")
        payload.beginArray()
        for scope in TokenScope.allCases where claims.scopes.contains(scope) { payload.string(scope.rawValue) }
        payload.endArray()
        payload.key("trips")
        payload.beginArray()
        if let trips = claims.trips {
            for trip in trips.sorted() { payload.string(trip) }
        } else {
            payload.string("*")
        }
        payload.endArray()
        payload.endObject()
        return sign(payload: payload.finish(), secret: secret)
    }

    /// Signs an arbitrary payload (tests use this for malformed claims).
    public static func sign(payload: [UInt8], secret: String, header: String = #"{"alg":"HS256","typ":"JWT"}"#) -> String {
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
        let mac = HMACSHA256.mac(key: Array(secret.utf8), data: Array(signingInput.utf8)) ?? []
        return signingInput + "." + Base64URL.encode(mac)
    }
}
