import CLibWebSockets

/// Reading what a request carries out of lws: header values (capped, or raw for framing),
/// query arguments, the peer's address, and an upgrade request made of them.
extension LWSServerHost {
    func header(_ wsi: OpaquePointer, _ token: Int32) -> String? {
        let tokenIndex = lws_token_indexes(rawValue: UInt32(token))
        let length = Int(lws_hdr_total_length(wsi, tokenIndex))
        guard length > 0, length < 16 * 1024 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), tokenIndex)
        guard copied >= 0 else { return nil }
        return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A header as received (nil when absent), with no length cap: framing needs to see a
    /// malformed value whole to refuse it.
    func rawHeader(_ wsi: OpaquePointer, _ token: Int32) -> String? {
        let tokenIndex = lws_token_indexes(rawValue: UInt32(token))
        let length = Int(lws_hdr_total_length(wsi, tokenIndex))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), tokenIndex)
        guard copied >= 0 else { return "" }  // present but unreadable: refused as malformed
        return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func queryArguments(_ wsi: OpaquePointer) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        let token = lws_token_indexes(rawValue: UInt32(trackhub_tok_uri_args()))
        var buffer = [CChar](repeating: 0, count: 4096)
        var index: Int32 = 0
        while index < 64 {
            let copied = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), token, index)
            if copied < 0 { break }
            let text = String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let equals = text.firstIndex(of: "=") {
                result.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
            } else if !text.isEmpty {
                result.append((text, ""))
            }
            index += 1
        }
        return result
    }

    func makeUpgradeRequest(_ wsi: OpaquePointer) -> UpgradeRequest {
        UpgradeRequest(
            path: header(wsi, trackhub_tok_get_uri()) ?? "/", query: queryArguments(wsi),
            origin: header(wsi, trackhub_tok_origin()), host: header(wsi, trackhub_tok_host()),
            peerAddress: peerAddress(wsi))
    }

    func peerAddress(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard let text = lws_get_peer_simple(wsi, &buffer, buffer.count) else { return "" }
        return String(cString: text)
    }
}
