import Foundation

/// Serves the web client (PROTOCOL section 10): files under the web root, Leaflet from
/// Debian's libjs-leaflet under `/vendor/leaflet/`, and the page routes `/`, `/trips/{id}`
/// and `/fleet`, which all answer the single-page app's `index.html`.
struct StaticFiles {
    let webRoot: String
    let leafletRoot: String

    /// Files are small and few: they are read from disk on each request, so an edited page
    /// shows on reload. Paths never leave their root.
    func response(for path: String) -> HTTPResponse {
        if path == "/" || path == "/fleet" || path == "/index.html" || isTripPage(path) {
            return file(at: webRoot + "/index.html")
        }
        if path.hasPrefix("/vendor/leaflet/") {
            let relative = String(path.dropFirst("/vendor/leaflet/".count))
            return safeFile(root: leafletRoot, relative: relative)
        }
        return safeFile(root: webRoot, relative: String(path.dropFirst()))
    }

    private func isTripPage(_ path: String) -> Bool {
        guard path.hasPrefix("/trips/") else { return false }
        let id = path.dropFirst("/trips/".count)
        return !id.isEmpty && !id.contains("/")
    }

    private func safeFile(root: String, relative: String) -> HTTPResponse {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        if relative.isEmpty || parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.hasPrefix(".") }) || relative.contains("\\") || relative.contains("\0") {
            return notFound()
        }
        return file(at: root + "/" + relative)
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
            respond(request.connection, HTTPResponse(status: 405, contentType: "text/plain; charset=utf-8", body: Array("method not allowed\n".utf8)))
            return
        }
        let files = StaticFiles(webRoot: config.webRoot ?? Hub.defaultWebRoot(), leafletRoot: config.leafletRoot)
        respond(request.connection, files.response(for: request.path))
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
