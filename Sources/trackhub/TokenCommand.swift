import TrackHubCLI
import Foundation
import TrackHubProtocol
import TrackHubServer

/// `trackhub token`: prints an HS256 token for a secured hub (PROTOCOL sections 2 and 9).
enum TokenCommand {
    static let help = """
    Usage: trackhub token [--secret S] --scope SCOPE[,SCOPE] [--trip ID]... [--sub NAME] [--ttl 1h]

    Prints a JWT (HS256) for a hub started with --jwt-secret.

      --secret S        the hub's secret (default: $TRACKHUB_JWT_SECRET)
      --scope LIST      comma-separated: courier, viewer, fleet, admin (required)
      --trip ID         a trip the token may touch; repeat for more; '*' for every trip
                        (default: none; ignored by the hub for admin and fleet)
      --sub NAME        who the token is for (default cli)
      --ttl DURATION    how long it is valid, e.g. 30m, 1h, 7d (default 1h)
    """

    static func parse(_ arguments: [String], environment: [String: String], now: Date) throws -> (claims: TokenClaims, secret: String, issuedAt: Int64)? {
        let flags = try Flags(arguments: arguments, known: ["secret", "scope", "trip", "sub", "ttl"], environment: environment)
        if flags.switches.contains("help") { return nil }
        guard let secret = flags.string("secret") ?? environment["TRACKHUB_JWT_SECRET"], !secret.isEmpty else {
            throw UsageError("--secret: no secret (give --secret or set TRACKHUB_JWT_SECRET)")
        }
        guard let scopeList = flags.string("scope"), !scopeList.isEmpty else {
            throw UsageError("--scope: required (courier, viewer, fleet, admin; comma-separated)")
        }
        var scopes: Set<TokenScope> = []
        for name in scopeList.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard let scope = TokenScope(rawValue: trimmed) else {
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
