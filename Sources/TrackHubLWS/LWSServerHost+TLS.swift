import CLibWebSockets

/// TLS: with a certificate and a key (`--tls-cert`, `--tls-key`), the context serves
/// `https`/`wss` on the same port. The paths are C strings the host keeps for the context's life.
extension LWSServerHost {
    /// Adds the TLS options to the context's creation info when both files are given.
    func applyTLS(to info: inout lws_context_creation_info) {
        if let certPath, let keyPath {
            info.options |= trackhub_opt_do_ssl_global_init()
            info.ssl_cert_filepath = UnsafePointer(certPath)
            info.ssl_private_key_filepath = UnsafePointer(keyPath)
        }
    }
}
