import TrackHubLWS

/// Cross-origin requests (PROTOCOL 14): what a browser on an allowed origin (section 1) needs
/// to call `/v1` from a page on its own domain. Pure: the headers come from the policy and the table.
enum CORS {
    /// Headers on every answer to a request from an allowed `Origin`; none without one
    /// (a refused origin is answered 403 before any route runs, without them).
    static func responseHeaders(origin: String?, host: String?, policy: OriginPolicy) -> [(name: String, value: String)] {
        guard let origin, !origin.isEmpty, policy.allowsOrigin(origin, host: host) else { return [] }
        return [
            ("access-control-allow-origin", origin),
            ("vary", "Origin"),
            // Not on the CORS safelist, so a page could not read them otherwise.
            ("access-control-expose-headers", "Location, Allow"),
        ]
    }

    /// The answer to `OPTIONS` on a known `/v1` path: 204, no token needed.
    static func preflight(allowed: [HTTPMethod]) -> HTTPResponse {
        HTTPResponse(status: 204, contentType: "", headers: [
            ("access-control-allow-methods", allowed.map(\.rawValue).joined(separator: ", ")),
            ("access-control-allow-headers", "Authorization, Content-Type"),
            ("access-control-max-age", "600"),
            ("allow", APIRoute.allowHeader(allowed)),
        ], body: [])
    }
}
