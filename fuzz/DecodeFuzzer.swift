// libFuzzer harness over everything the hub decodes from the network: WebSocket messages,
// HTTP bodies, query strings, encoded polylines and tokens. Built by scripts/fuzz.sh
// (swiftc -sanitize=fuzzer,address) together with TrackHubCore, TrackHubProtocol and the
// token verifier (Sources/TrackHubServer/Auth). A crash, a sanitizer report or a broken
// invariant (a trap) is a finding.
import TrackHubCore
import TrackHubProtocol

private let now: Int64 = 1_760_000_000_000
private let limits = ProtocolLimits()
private let secret = "fuzz-secret"
private let validToken = JWT.mint(TokenClaims(subject: "f", expiresAt: 1_760_003_600, scopes: [.viewer], trips: ["T1"]), secret: secret)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let selector = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch selector % 8 {
    case 0, 1:
        let decoded = ClientMessage.decode(bytes, limits: limits, now: now)
        if case .failure(let error) = decoded.result {
            precondition(!error.message.isEmpty, "an error must say what was wrong")
            precondition(error.code == .badRequest || error.code == .tooLarge, "decode gave \(error.code)")
        }
        if case .success(let message) = decoded.result, let trip = message.trip {
            precondition(TripID.isValid(trip), "decoded an invalid trip id")
        }
    case 2:
        if let request = try? CreateTripRequest.decode(bytes, limits: limits) {
            precondition(request.waypoints.count <= limits.maxWaypoints)
            if let id = request.id { precondition(TripID.isValid(id)) }
            for point in request.waypoints { precondition(point.isValid) }
        }
    case 3:
        if let batch = try? FixBatchRequest.decode(bytes, limits: limits, now: now) {
            for fix in batch.fixes {
                precondition(fix.point.isValid && fix.ts <= now + limits.maxClockSkewMs)
            }
        }
    case 4:
        _ = try? RerouteRequest.decode(bytes, limits: limits)
    case 5:
        let text = String(decoding: bytes, as: UTF8.self)
        if let query = try? QueryString.parse(text) {
            _ = try? TripListQuery.parse(query)
            _ = try? ClustersQuery.parse(query)
            _ = try? TrailQuery.parse(query)
        }
    case 6:
        let text = String(decoding: bytes, as: UTF8.self)
        if let points = try? Polyline.decode(text) {
            _ = try? Route(points: points)
        }
    default:
        // Tokens: random bytes, and the valid token with bytes spliced in, must never verify
        // unless they are the valid token itself.
        let text = String(decoding: bytes, as: UTF8.self)
        if case .success = JWT.verify(text, secret: secret, nowMs: now) {
            precondition(text == validToken, "a forged token verified: \(text)")
        }
        if !bytes.isEmpty {
            var forged = Array(validToken.utf8)
            let at = Int(bytes[0]) % forged.count
            forged.replaceSubrange(at..<min(forged.count, at + bytes.count - 1), with: bytes.dropFirst())
            let forgedText = String(decoding: forged, as: UTF8.self)
            if case .success = JWT.verify(forgedText, secret: secret, nowMs: now) {
                precondition(forgedText == validToken, "a forged token verified: \(forgedText)")
            }
        }
    }
    return 0
}
