// libFuzzer harness over the hub's HTTP request path: the input is one raw HTTP/1.1 request
// (request line, headers, blank line, body). A small, tolerant splitter here does what
// libwebsockets does for the hub (method, request-target, headers, repeated headers joined
// by ","), then the request goes through the pure Swift steps the hub runs on it, in the
// hub's order (Hub+HTTP.swift routeAPI / routeTrip, Hub+Auth.swift):
//   framing (HTTPFraming, PROTOCOL 1) → path split and trip id → query string and the typed
//   query → bearer token (JWT) → the body decoder the method and path name.
// Each step's answer is checked against a small independent reference or an invariant, and
// every step is run twice (decoding must be deterministic). A crash, a sanitizer report or a
// broken invariant (a trap) is a finding. Built by scripts/fuzz.sh together with
// TrackHubCore, TrackHubProtocol and the token verifier (Sources/TrackHubServer/Auth).
import TrackHubCore
import TrackHubCrypto
import TrackHubProtocol

private let now: Int64 = 1_760_000_000_000
private let limits = ProtocolLimits.default
/// The bearer tokens in the seed corpus (fuzz/corpus/http) were signed with this secret.
private let secret = "fuzz-secret"

// MARK: - The splitter (harness side; not under test)

/// A request as libwebsockets hands it to the hub: raw target, header values, body bytes.
private struct RawRequest {
    var method = ""
    var target = ""
    /// Lowercased name → the values of every header of that name, in order.
    var headers: [String: [String]] = [:]
    var body: ArraySlice<UInt8> = []

    func values(_ name: String) -> [String] { headers[name] ?? [] }
}

/// Splits at the first blank line (CRLF CRLF, or a bare LF LF: tolerant on purpose, so the
/// mutator reaches the interesting parts instead of fighting line endings). Lines without a
/// `:` are skipped. Nil when there is no request line with at least a method and a target,
/// which a real server would refuse before the hub saw anything.
private func split(_ bytes: UnsafeBufferPointer<UInt8>) -> RawRequest? {
    var headerEnd = bytes.count
    var bodyStart = bytes.count
    var i = 0
    while i < bytes.count {
        if bytes[i] == 0x0A {
            if i + 1 < bytes.count, bytes[i + 1] == 0x0A { headerEnd = i; bodyStart = i + 2; break }
            if i + 2 < bytes.count, bytes[i + 1] == 0x0D, bytes[i + 2] == 0x0A { headerEnd = i; bodyStart = i + 3; break }
        }
        i += 1
    }
    let head = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<headerEnd]), as: UTF8.self)
    var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map { line in
        line.last == "\r" ? line.dropLast() : line
    }
    guard !lines.isEmpty else { return nil }
    let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true)
    guard requestLine.count >= 2 else { return nil }
    var request = RawRequest()
    request.method = String(requestLine[0])
    request.target = String(requestLine[1])
    for line in lines {
        guard let colon = line.firstIndex(of: ":") else { continue }
        let name = line[..<colon].trimmingOWS().lowercased()
        // The value keeps its surrounding spaces: trimming them is HTTPFraming's job.
        request.headers[name, default: []].append(String(line[line.index(after: colon)...]))
    }
    request.body = Array(UnsafeBufferPointer(rebasing: bytes[bodyStart...]))[...]
    return request
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate func trimmingOWS() -> Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}

// MARK: - Checks shared by every step

/// Runs `decode` twice: the two outcomes must be equal (no hidden state, no randomness).
private func twice<T: Equatable>(_ what: String, _ decode: () throws(ProtocolError) -> T) -> Result<T, ProtocolError> {
    let first = Result { () throws(ProtocolError) -> T in try decode() }
    let second = Result { () throws(ProtocolError) -> T in try decode() }
    precondition(first == second, "\(what) is not deterministic: \(first) then \(second)")
    return first
}

/// True when `message` starts with the field `name` as a whole word (`route` names
/// `route[1][0] (lon) must be…` but not `route_polyline must be…`).
private func names(_ message: String, _ name: String) -> Bool {
    guard message.hasPrefix(name) else { return false }
    guard let next = message.dropFirst(name.count).unicodeScalars.first else { return true }
    return !(next.properties.isAlphabetic || ("0"..."9").contains(next) || next == "_")
}

/// What the JSON layer under every body decoder may name (JSONScanner, RequestBody).
private let jsonFields = ["invalid JSON", "JSON nesting", "the request body"]
/// The fields each decoder can name in a `bad_request` or `too_large` message. A message
/// that starts with none of them does not tell the client what to fix.
private let createFields = jsonFields + ["id", "route", "route_polyline", "waypoints", "destination", "rider", "config"]
private let rerouteFields = jsonFields + ["route", "route_polyline", "waypoints", "destination"]
private let fixesFields = jsonFields + ["fixes"]
private let queryFields = ["query parameter"]
private let listFields = queryFields + ["status", "limit", "after"]
private let trailFields = queryFields + ["from", "to"]
private let clustersFields = queryFields + ["zoom", "bbox"]

/// A decoder's error: `bad_request` or `too_large`, a message that is more than the code,
/// and starts with one of the decoder's field names.
private func check(_ error: ProtocolError, _ what: String, fields: [String]) {
    precondition(error.code == .badRequest || error.code == .tooLarge, "\(what) gave \(error.code)")
    precondition(!error.message.isEmpty && error.message != error.code.rawValue, "\(what): an error must say what was wrong")
    precondition(fields.contains { names(error.message, $0) }, "\(what): message names no field: \(error.message)")
}

// MARK: - Framing (PROTOCOL 1)

/// The framing rule written out independently of HTTPFraming: Transfer-Encoding is refused;
/// no Content-Length is no body (refused on POST and PUT); otherwise exactly one header
/// whose value is 1–18 decimal digits with optional spaces and tabs around them. Nil: 400.
private func referenceFraming(requiresLength: Bool, contentLengths: [String], transferEncoding: Bool) -> HTTPFraming?? {
    if transferEncoding { return .some(nil) }
    guard let only = contentLengths.first else { return requiresLength ? .some(nil) : .some(.noBody) }
    if contentLengths.count > 1 { return .some(nil) }
    let digits = Substring(only).trimmingOWS()
    guard (1...18).contains(digits.utf8.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
          let n = Int(digits) else { return .some(nil) }
    return .some(n == 0 ? .noBody : .body(length: n))
}

// MARK: - Path and query

/// The hub's `request.path` is the target before `?`, percent-decoded (libwebsockets does
/// it for the server; this pure Swift stand-in uses the hub's own decoder, with `+` kept
/// literal as it is in a path). Nil when it is not valid percent-encoded UTF-8.
private func decodePath(_ raw: Substring) -> String? {
    QueryString.percentDecode(Substring(raw.replacingPlus()))
}

/// An independent percent-decoder (`%XX`, `+` is a space; nil on a bad escape or bad UTF-8),
/// to check QueryString.percentDecode against.
private func referenceDecode(_ text: Substring) -> String? {
    let utf8 = Array(text.utf8)
    var out: [UInt8] = []
    var i = 0
    func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }
    while i < utf8.count {
        switch utf8[i] {
        case 0x2B: out.append(0x20); i += 1
        case 0x25:
            guard i + 2 < utf8.count, let h = hex(utf8[i + 1]), let l = hex(utf8[i + 2]) else { return nil }
            out.append(h << 4 | l); i += 3
        default: out.append(utf8[i]); i += 1
        }
    }
    return String(validating: out, as: UTF8.self)
}

/// Percent-encodes everything but RFC 3986's unreserved characters and `:` (literal in a
/// path segment and a query), so that decoding gives `text` back.
private func encode(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E, 0x3A: out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let digits = Array("0123456789ABCDEF".utf8)
            out += "%" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
        }
    }
    return out
}

/// Trip ids written out independently of TripID: 1–64 of `A-Z a-z 0-9 . _ : -`, not `.`/`..`.
private func referenceTripID(_ id: String) -> Bool {
    let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-".utf8)
    return (1...64).contains(id.utf8.count) && id.utf8.allSatisfy(allowed.contains) && id != "." && id != ".."
}

/// Parses the query, checks its decoding, and runs the three typed queries on it (whichever
/// route is named: they are cheap, and the checks hold for all of them).
private func queries(_ raw: Substring) {
    // The reference: each non-empty `&`-separated part, split at its first `=`, decoded.
    let expected = (raw.first == "?" ? raw.dropFirst() : raw).split(separator: "&").map { part -> (String?, String?) in
        let equals = part.firstIndex(of: "=") ?? part.endIndex
        return (referenceDecode(part[..<equals]), equals == part.endIndex ? "" : referenceDecode(part[part.index(after: equals)...]))
    }
    let query: QueryString
    switch twice("QueryString.parse", { () throws(ProtocolError) in try QueryString.parse(raw) }) {
    case .failure(let error):
        check(error, "QueryString.parse", fields: queryFields)
        precondition(expected.contains { $0.0 == nil || $0.1 == nil }, "QueryString refused a query the reference decodes")
        return
    case .success(let value):
        query = value
    }
    precondition(query.items.count == expected.count, "query: \(query.items.count) items, reference \(expected.count)")
    for (item, reference) in zip(query.items, expected) {
        precondition(item.name == reference.0 && item.value == reference.1, "query item \(item) != reference \(reference)")
    }
    // Encoding the items again and parsing that gives the same items (an empty name
    // re-encodes as "=value", which parses back to the same item).
    let again = query.items.map { encode($0.name) + "=" + encode($0.value) }.joined(separator: "&")
    guard let reparsed = try? QueryString.parse(again) else { preconditionFailure("re-encoded query does not parse: \(again)") }
    precondition(reparsed == query, "query does not survive re-encoding: \(again)")

    switch twice("TripListQuery", { () throws(ProtocolError) in try TripListQuery.parse(query) }) {
    case .success(let list):
        precondition((1...TripListQuery.maxLimit).contains(list.limit), "limit \(list.limit)")
        if let after = list.after { precondition(TripID.isValid(after), "after \(after)") }
        if let statuses = list.statuses { precondition(!statuses.isEmpty && Set(statuses).count == statuses.count, "statuses \(statuses)") }
    case .failure(let error): check(error, "TripListQuery", fields: listFields)
    }
    switch twice("TrailQuery", { () throws(ProtocolError) in try TrailQuery.parse(query) }) {
    case .success: break
    case .failure(let error): check(error, "TrailQuery", fields: trailFields)
    }
    switch twice("ClustersQuery", { () throws(ProtocolError) in try ClustersQuery.parse(query) }) {
    case .success(let clusters):
        let v = clusters.viewport
        precondition((0...Viewport.maxZoom).contains(v.zoom), "zoom \(v.zoom)")
        precondition(v.west >= -180 && v.west <= 180 && v.east >= -180 && v.east <= 180, "longitudes \(v.bbox)")
        precondition(v.south <= v.north && abs(v.south) <= Viewport.maxLatitude && abs(v.north) <= Viewport.maxLatitude, "latitudes \(v.bbox)")
    case .failure(let error): check(error, "ClustersQuery", fields: clustersFields)
    }
}

// MARK: - Token

/// `Authorization: Bearer <token>` as Hub+Auth reads it. A token that verifies must carry
/// the HMAC of its first two parts under the secret in its one canonical encoding (so no
/// forged or re-spelled token passes), and must not be expired.
private func token(_ headers: [String]) {
    guard let header = headers.first.map({ Substring($0).trimmingOWS() }), !header.isEmpty else { return }
    let scheme = header.prefix { $0 != " " }
    guard scheme.lowercased() == "bearer" else { return }
    let text = String(header.dropFirst(scheme.count).trimmingOWS())
    let first = JWT.verify(text, secret: secret, nowMs: now)
    precondition(first == JWT.verify(text, secret: secret, nowMs: now), "JWT.verify is not deterministic")
    switch first {
    case .success(let claims):
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        precondition(parts.count == 3, "a token of \(parts.count) parts verified")
        let mac = HMACSHA256.mac(key: Array(secret.utf8), data: Array((parts[0] + "." + parts[1]).utf8)) ?? []
        precondition(Base64URL.encode(mac) == parts[2], "a token verified without its signature: \(text)")
        precondition(!JWT.isExpired(expiresAt: claims.expiresAt, nowMs: now), "an expired token verified")
    case .failure(let error):
        precondition(!error.message.isEmpty, "a token error must say what was wrong")
    }
}

// MARK: - Bodies

private func createTrip(_ body: [UInt8]) {
    switch twice("CreateTripRequest", { () throws(ProtocolError) in try CreateTripRequest.decode(body, limits: limits) }) {
    case .success(let request):
        if let id = request.id { precondition(TripID.isValid(id), "id \(id)") }
        precondition(request.waypoints.count <= limits.maxWaypoints, "\(request.waypoints.count) waypoints")
        precondition(request.waypoints.allSatisfy(\.isValid) && request.destination?.isValid != false, "invalid point")
        if let route = request.route { precondition(route.pointCount >= 2 && route.pointCount <= limits.maxRoutePoints, "route of \(route.pointCount)") }
    case .failure(let error): check(error, "CreateTripRequest", fields: createFields)
    }
}

/// The OsmAnd door (PROTOCOL 11): the device the hub looks up before parsing the body
/// (`OsmAndRequest.deviceID(formBody:)`) is the device the parser then reads, and a form of
/// more than 100 fields never parses.
private func osmand(_ rawQuery: Substring, _ body: [UInt8]) {
    let query = (try? QueryString.parse(rawQuery))?.items ?? []
    let scanned = OsmAndRequest.deviceID(formBody: body)
    precondition(scanned == OsmAndRequest.deviceID(formBody: body), "the device scan is deterministic")
    switch Result(catching: { () throws(ProtocolError) -> DeviceFix in try OsmAndRequest.parse(query: query, body: body, limits: limits, now: now) }) {
    case .success(let fix):
        if let scanned { precondition(fix.device == scanned, "scanned device \(scanned) but parsed \(fix.device)") }
        let first = body.first { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }
        let fields = body.reduce(1) { $0 + ($1 == UInt8(ascii: "&") ? 1 : 0) }
        if let first, first != UInt8(ascii: "{") { precondition(fields <= OsmAndRequest.maxFormFields, "a form of \(fields) fields parsed") }
    case .failure(let error):
        precondition(!error.message.isEmpty, "an error names what is wrong")
    }
}

private func reroute(_ body: [UInt8]) {
    switch twice("RerouteRequest", { () throws(ProtocolError) in try RerouteRequest.decode(body, limits: limits) }) {
    case .success(let request):
        precondition(request.route.pointCount >= 2 && request.route.pointCount <= limits.maxRoutePoints, "route of \(request.route.pointCount)")
        precondition((request.waypoints?.count ?? 0) <= limits.maxWaypoints, "too many waypoints")
    case .failure(let error): check(error, "RerouteRequest", fields: rerouteFields)
    }
}

private func fixes(_ body: [UInt8]) {
    switch twice("FixBatchRequest", { () throws(ProtocolError) in try FixBatchRequest.decode(body, limits: limits, now: now) }) {
    case .success(let batch):
        for fix in batch.fixes {
            precondition(fix.point.isValid && fix.ts <= now + limits.maxClockSkewMs, "fix \(fix)")
        }
    case .failure(let error): check(error, "FixBatchRequest", fields: fixesFields)
    }
}

// MARK: - The request

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0, let request = split(UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    let method = request.method  // libwebsockets knows the methods by their exact spelling
    let requiresLength = method == "POST" || method == "PUT"

    // 1. Framing. Repeated Content-Length headers reach the hub joined by "," (lws).
    let contentLengths = request.values("content-length")
    let joined = contentLengths.isEmpty ? nil : contentLengths.joined(separator: ",")
    let transferEncoding = !request.values("transfer-encoding").isEmpty
    let decided = twice("HTTPFraming.decide") { () throws(ProtocolError) in
        try HTTPFraming.decide(requiresLength: requiresLength, contentLength: joined, hasTransferEncoding: transferEncoding)
    }
    let expected = referenceFraming(requiresLength: requiresLength, contentLengths: contentLengths, transferEncoding: transferEncoding)
    let body: [UInt8]
    switch decided {
    case .failure(let error):
        precondition(expected == .some(nil), "framing refused \(String(describing: joined)) (reference: \(String(describing: expected)))")
        precondition(error.code == .badRequest && error.message.contains("Content-Length"), "framing error \(error)")
        return 0  // 400 and the connection closes: nothing runs on this request
    case .success(let framing):
        precondition(expected == .some(framing), "framing \(framing) for \(String(describing: joined)) (reference: \(String(describing: expected)))")
        switch framing {
        case .noBody:
            body = []
        case .body(let length):
            precondition(length > 0, "a body of length \(length)")
            // Fewer bytes than announced: the hub waits for the rest (then 408), never runs it.
            guard length <= request.body.count else { return 0 }
            body = Array(request.body.prefix(length))
            precondition(body.count == length)
        }
    }

    // 2. Path. Only /v1/... reaches routeAPI; it splits on "/" keeping empty parts and drops
    // the leading "" and "v1".
    let target = request.target[...]
    let rawPath = target.prefix { $0 != "?" }
    let rawQuery = target.dropFirst(rawPath.count)
    let path = decodePath(rawPath)
    precondition(path == referenceDecode(Substring(rawPath.replacingPlus())), "path decoding differs from the reference")
    guard let path else { return 0 }  // lws refuses a target it cannot decode
    guard path.hasPrefix("/v1/") else { return 0 }
    let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).map(String.init)

    // 3. Query string and the typed queries.
    queries(rawQuery)

    // 4. Token (a secured hub checks it before the body).
    token(request.values("authorization"))

    // 5. The body decoder of the route (routeAPI / routeTrip); a trip route checks the id first.
    switch (method, parts.count, parts.first) {
    case ("POST", 1, "trips"):
        createTrip(body)
    case ("POST", 1, "osmand"), ("GET", 1, "osmand"):
        osmand(rawQuery, body)
    case (_, _, "trips") where parts.count >= 2:
        let id = parts[1]
        precondition(TripID.isValid(id) == referenceTripID(id), "TripID.isValid(\(id)) disagrees with the reference")
        guard TripID.isValid(id) else { return 0 }  // 400 from the router
        precondition(encode(id) == id, "a valid id needs no escaping")
        let rest = parts.dropFirst(2)
        switch (method, rest.first, rest.count) {
        case ("PUT", "route", 1): reroute(body)
        case ("POST", "fixes", 1): fixes(body)
        default: break  // GET, DELETE, proceed, trail: no body is decoded
        }
    default:
        break
    }
    return 0
}

extension Substring {
    /// `+` as `%2B`, so that the reference decoder keeps it literal as in a path.
    fileprivate func replacingPlus() -> String {
        var out = ""
        for c in self { if c == "+" { out += "%2B" } else { out.append(c) } }
        return out
    }
}
