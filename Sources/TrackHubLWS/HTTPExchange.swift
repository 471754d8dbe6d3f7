/// One HTTP request on its way through the server host, from its headers to the last byte of
/// its answer. A class, so that the body grows in place as chunks arrive (a struct in the
/// host's dictionary was copied whole per chunk: quadratic). Service thread only.
final class HTTPExchange {
    var request: HTTPRequest
    var body: [UInt8] = []
    /// The body's length as framed by `Content-Length` (0: none).
    var expectedLength = 0
    var response: HTTPResponse?
    /// The body was not read (or not all of it): close the connection after the answer,
    /// since the next request's start is unknown.
    var closeAfterResponse = false
    var headersSent = false
    var bodyOffset = 0
    /// A streamed response's `body` is out; the next chunks come from its `requestChunk`.
    var firstPartSent = false
    /// A streamed response's next part was asked for and is not in yet (`supplyChunk`).
    var chunkRequested = false
    /// A streamed response's next part, supplied and not yet written: with `chunkRequested`,
    /// at most one part is held or being produced ahead of the one lws is writing.
    var suppliedChunk: HTTPBodyChunk?
    /// Handed to the delegate already (lws still reports BODY_COMPLETION for a POST/PUT
    /// dispatched without a body, which would run e.g. a `proceed` twice).
    var dispatched = false
    /// When its headers were in (monotonic µs), for the access log's duration.
    let startedAt = monotonicMicros()

    init(request: HTTPRequest) { self.request = request }
}
