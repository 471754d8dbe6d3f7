import Foundation
import TrackHubLWS

/// Serves the web client (PROTOCOL section 10): files under the web root, Leaflet from
/// Debian's libjs-leaflet under `/vendor/leaflet/`, and the page routes `/`, `/trips/{id}`
/// and `/fleet`, which all answer the single-page app's `index.html`, and `/t/{token}`, the
/// customer's page of a share link (PROTOCOL 13), which answers `share.html`: a page of its
/// own, not the dashboard with parts hidden.
struct StaticFiles {
    let webRoot: String
    let leafletRoot: String

    /// Files are small and few: they are read from disk on each request, so an edited page
    /// shows on reload. Paths never leave their root: a relative path with an empty, `.`,
    /// `..` or hidden component is refused, and the file's real path (symlinks resolved)
    /// must lie inside the real root, so a symlink that leads out of it is 404 too.
    /// `host` is the request's `Host`, for the WebSocket origin of the page's CSP.
    func response(for path: String, host: String? = nil) -> HTTPResponse {
        var response: HTTPResponse
        if path == "/" || path == "/fleet" || path == "/index.html" || isTripPage(path) {
            response = safeFile(root: webRoot, relative: "index.html")
        } else if isSharePage(path) {
            response = safeFile(root: webRoot, relative: "share.html")
        } else if path.hasPrefix("/vendor/leaflet/") {
            let relative = String(path.dropFirst("/vendor/leaflet/".count))
            response = safeFile(root: leafletRoot, relative: relative)
        } else {
            response = safeFile(root: webRoot, relative: String(path.dropFirst()))
        }
        response.headers += Self.securityHeaders(host: host)
        return response
    }

    /// Every answer for the web client (pages, files, 404s): scripts and styles only from
    /// the hub itself (no inline script, style element or style attribute), images also
    /// from any https: tile server and data: URLs, connections to the hub and its
    /// WebSocket; no referrer, since page URLs carry `?token=` (PROTOCOL 10).
    static func securityHeaders(host: String?) -> [(name: String, value: String)] {
        var connect = "'self'"
        if let host, isPlainHost(host) {
            connect += " ws://\(host) wss://\(host)"
        }
        let policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "
            + "connect-src \(connect); base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        return [("content-security-policy", policy), ("referrer-policy", "no-referrer"), ("x-content-type-options", "nosniff")]
    }

    /// A `Host` value that can go into the policy as it is: a name, IPv4 or bracketed IPv6
    /// address with an optional port; anything else (spaces, `;`, quotes) is left out.
    static func isPlainHost(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 255 && host.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            case UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
                return true
            default:
                return false
            }
        }
    }

    private func isTripPage(_ path: String) -> Bool {
        guard path.hasPrefix("/trips/") else { return false }
        let id = path.dropFirst("/trips/".count)
        return !id.isEmpty && !id.contains("/")
    }

    /// `/t/{token}`: one path segment after `/t/`.
    private func isSharePage(_ path: String) -> Bool {
        guard path.hasPrefix("/t/") else { return false }
        let token = path.dropFirst("/t/".count)
        return !token.isEmpty && !token.contains("/")
    }

    private func safeFile(root: String, relative: String) -> HTTPResponse {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        if relative.isEmpty || parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.hasPrefix(".") }) || relative.contains("\\") || relative.contains("\0") {
            return notFound()
        }
        // The real paths, symlinks resolved: the file must be inside the root's.
        guard let realRoot = Self.realPath(root), let realFile = Self.realPath(root + "/" + relative),
              realFile.hasPrefix(realRoot == "/" ? "/" : realRoot + "/") else {
            return notFound()
        }
        return file(at: realFile)
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private func file(at path: String) -> HTTPResponse {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
              let data = FileManager.default.contents(atPath: path) else {
            return notFound()
        }
        return HTTPResponse(status: 200, contentType: Self.contentType(for: path), headers: [("cache-control", "no-cache")], body: [UInt8](data))
    }

    private func notFound() -> HTTPResponse {
        HTTPResponse(status: 404, contentType: "text/plain; charset=utf-8", body: Array("not found\n".utf8))
    }

    static func contentType(for path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "html": return "text/html; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "json": return "application/json"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "ico": return "image/x-icon"
        case "map": return "application/json"
        default: return "application/octet-stream"
        }
    }
}

extension Hub {
    func serveWebClient(_ request: HTTPRequest) {
        guard request.method == .get || request.method == .head else {
            services.replies.respond(request.connection, HTTPResponse(status: 405, contentType: "text/plain; charset=utf-8",
                                                     headers: StaticFiles.securityHeaders(host: request.host), body: Array("method not allowed\n".utf8)))
            return
        }
        let files = StaticFiles(webRoot: config.webRoot ?? Hub.defaultWebRoot(), leafletRoot: config.leafletRoot)
        services.replies.respond(request.connection, files.response(for: request.path, host: request.host))
    }

    /// `web-client/` next to the binary's package, else the working directory's.
    static func defaultWebRoot() -> String {
        var candidates = [FileManager.default.currentDirectoryPath + "/web-client"]
        // A binary built in `.build/<triple>/<config>/` finds the package's web-client/ above it.
        var directory = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(directory.appendingPathComponent("web-client").path)
            directory = directory.deletingLastPathComponent()
        }
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate + "/index.html") {
            return candidate
        }
        return FileManager.default.currentDirectoryPath + "/web-client"
    }
}
