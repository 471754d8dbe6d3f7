/// An HTTP/1.1 answer written byte for byte, for the few places the host answers outside
/// lws's HTTP writer (a refused WebSocket upgrade): the status line with its reason phrase,
/// the headers, `content-length` and `connection: close`.
enum HTTPStatusLine {
    /// The reason phrase of the statuses the hub answers (RFC 9110); others get none.
    static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 503: "Service Unavailable"
        default: ""
        }
    }

    /// A whole response with a JSON body, after which the connection closes.
    static func closingResponse(status: Int, headers: [(name: String, value: String)], body: [UInt8]) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason(status))\r\n"
        head += "content-type: application/json\r\ncontent-length: \(body.count)\r\ncache-control: no-store\r\nconnection: close\r\n"
        for header in headers {
            head += "\(header.name.lowercased()): \(header.value)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}
