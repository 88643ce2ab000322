/// Why TLS failed: a code to branch on and the reasons OpenSSL gave.
package struct TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        /// A context could not be made: a certificate, key or trusted root that OpenSSL refused.
        case configuration
        /// The peer's certificate did not verify: its chain, its validity, or the name or address it was asked for.
        case certificate
        /// The handshake failed for another reason (no common version or cipher, an alert, bytes that are not TLS).
        case handshake
        /// After the handshake, records that did not decrypt or parse.
        case protocolViolation
        /// The connection closed without TLS's close_notify: whoever reads to the end must check the answer was whole.
        case uncleanShutdown
        /// A write after the connection had closed or failed.
        case closed
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "TLS \(code.rawValue): \(message)" }
}
