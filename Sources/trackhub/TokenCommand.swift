import TrackHubCLI
import Foundation
import TrackHubProtocol
import TrackHubServer

/// `trackhub token`: prints an HS256 token for a secured hub (PROTOCOL sections 2 and 9).
enum TokenCommand {
    static let help = """
    Usage: trackhub token [--secret S | --secret-file FILE] --scope SCOPE[,SCOPE] [--trip ID]... [--sub NAME] [--ttl 1h]

    Prints a JWT (HS256) for a hub started with --jwt-secret or --jwt-secret-file.

      --secret S        the hub's secret (default: $TRACKHUB_JWT_SECRET); of two (S1,S2, while
                        rotating) the token is signed with the first
      --secret-file FILE
                        read the secret from FILE (default: $TRACKHUB_JWT_SECRET_FILE)
      --scope LIST      comma-separated: courier, viewer, fleet, admin (required); a customer's
                        share link is not made here but by POST /v1/trips/{id}/share
      --trip ID         a trip the token may touch; repeat for more; '*' for every trip
                        (default: none; ignored by the hub for admin and fleet)
      --sub NAME        who the token is for (default cli)
      --ttl DURATION    how long it is valid, e.g. 30m, 1h, 7d (default 1h)
    """

    static func parse(_ arguments: [String], environment: [String: String], now: Date) throws -> (claims: TokenClaims, secret: String, issuedAt: Int64)? {
        let flags = try Flags(arguments: arguments, known: ["secret", "secret-file", "scope", "trip", "sub", "ttl"], environment: environment)
        if flags.switches.contains("help") { return nil }
        let secret = try signingSecret(flags, environment: environment)
        guard let scopeList = flags.string("scope"), !scopeList.isEmpty else {
            throw UsageError("--scope: required (courier, viewer, fleet, admin; comma-separated)")
        }
        var scopes: Set<TokenScope> = []
        for name in scopeList.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard let scope = TokenScope(rawValue: trimmed), scope != .share else {
                if trimmed == TokenScope.share.rawValue {
                    // A share token must carry a jti the hub knows, so that it can be revoked.
                    throw UsageError("--scope: share links are issued by the hub: POST /v1/trips/{id}/share (admin)")
                }
                throw UsageError("--scope: \(trimmed) is not courier, viewer, fleet or admin")
            }
            scopes.insert(scope)
        }
        var trips: Set<String>? = []
        for trip in flags.all("trip") {
            if trip == "*" {
                trips = nil
            } else {
                guard TripID.isValid(trip) else { throw UsageError("--trip: \(trip) is not a valid trip id") }
                trips?.insert(trip)
            }
        }
        let subject = flags.string("sub") ?? "cli"
        let ttlMs = try flags.durationMs("ttl") ?? 3_600_000
        guard ttlMs >= 1000 else { throw UsageError("--ttl: must be at least 1s") }
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        let (expiresAt, overflow) = issuedAt.addingReportingOverflow(ttlMs / 1000)
        guard !overflow, expiresAt < 1_000_000_000_000 else { throw UsageError("--ttl: too long") }
        return (TokenClaims(subject: subject, expiresAt: expiresAt, scopes: scopes, trips: trips), secret, issuedAt)
    }

    /// The secret to sign with: the first of `--secret` (or the file, or the hub's own
    /// environment variables), so a token minted during a rotation carries the new secret.
    static func signingSecret(_ flags: Flags, environment: [String: String]) throws -> String {
        let fromEnvironment = { (name: String) in environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let text: String, label: String
        if let secret = flags.string("secret") {
            (text, label) = (secret, "--secret")
        } else if let path = flags.string("secret-file") {
            (text, label) = (try SecretList.read(file: path, label: "--secret-file"), "--secret-file")
        } else if let secret = fromEnvironment("TRACKHUB_JWT_SECRET") {
            (text, label) = (secret, "TRACKHUB_JWT_SECRET")
        } else if let path = fromEnvironment("TRACKHUB_JWT_SECRET_FILE") {
            (text, label) = (try SecretList.read(file: path, label: "TRACKHUB_JWT_SECRET_FILE"), "TRACKHUB_JWT_SECRET_FILE")
        } else {
            throw UsageError("--secret: no secret (give --secret or --secret-file, or set TRACKHUB_JWT_SECRET)")
        }
        return try SecretList.split(text, label: label)[0]
    }

    static func run(_ arguments: [String]) -> Int32 {
        do {
            guard let parsed = try parse(arguments, environment: ProcessInfo.processInfo.environment, now: Date()) else {
                print(help)
                return 0
            }
            print(JWT.mint(parsed.claims, secret: parsed.secret, issuedAt: parsed.issuedAt))
            return 0
        } catch {
            FileHandle.standardError.write(Data("trackhub token: \(error)\n".utf8))
            return 2
        }
    }
}
