internal import COpenSSL
#if canImport(FoundationEssentials)
    internal import FoundationEssentials
#else
    internal import Foundation
#endif

/// Access to OpenSSL's per-thread error queue.
///
/// Every public operation clears the queue first, so reasons left by an earlier, unrelated failure
/// never end up in the next error's message.
enum OpenSSLErrorQueue {
    /// Discards everything queued on the calling thread.
    static func clear() {
        ERR_clear_error()
    }

    /// Removes all queued errors and returns their reason texts, oldest first.
    static func drain() -> [String] {
        var reasons: [String] = []
        while true {
            let error = ERR_get_error()
            guard error != 0 else { return reasons }
            if let reason = ERR_reason_error_string(error) {
                reasons.append(String(cString: reason))
            } else {
                var buffer = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(error, &buffer, buffer.count)
                reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
    }

    /// Whether the most recent queued error says a PEM reader found no further `-----BEGIN` line, i.e. end of input.
    static var lastErrorIsPEMNoStartLine: Bool {
        let error = ERR_peek_last_error()
        return ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE
    }
}

/// Whole seconds since 1970, rounded down, as OpenSSL's `time_t`; nil when the date is not finite or does not
/// fit (a date from input may be 1e300 s): the one conversion of a `Date` to OpenSSL time, checked.
func timeT(_ date: Date) -> time_t? {
    time_t(exactly: date.timeIntervalSince1970.rounded(.down))
}

/// Runs `body` with a read-only memory BIO over the UTF-8 bytes of `text`; the BIO is freed afterwards.
func withMemoryBIO<Result>(
    reading text: String,
    failure code: ForgeCryptoError.Code,
    _ body: (OpaquePointer) throws -> Result
) throws -> Result {
    try text.withCString { cString in
        guard let bio = BIO_new_mem_buf(cString, -1) else {
            throw ForgeCryptoError(code, "BIO_new_mem_buf")
        }
        defer { BIO_free(bio) }
        return try body(bio)
    }
}

/// Returns what `write` puts into a fresh memory BIO; `write` reports success, and its failure becomes an error with `context`.
func bytesWritten(
    failure code: ForgeCryptoError.Code,
    context: String,
    by write: (OpaquePointer) -> Bool
) throws -> [UInt8] {
    guard let bio = BIO_new(BIO_s_mem()) else {
        throw ForgeCryptoError(code, "BIO_new")
    }
    defer { BIO_free(bio) }
    guard write(bio) else {
        throw ForgeCryptoError(code, context)
    }
    var contents: UnsafeMutablePointer<CChar>?
    let length = COpenSSL_BIO_get_mem_data(bio, &contents)
    guard length >= 0 else {
        throw ForgeCryptoError(code, "BIO_get_mem_data")
    }
    guard length > 0, let contents else { return [] }
    return Array(UnsafeRawBufferPointer(start: contents, count: length))
}

/// Encodes with an OpenSSL `i2d_*` function using its two-call protocol (ask for the length, then write).
func encodedDER(
    failure code: ForgeCryptoError.Code,
    context: String,
    by encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32
) throws -> [UInt8] {
    let length = encode(nil)
    guard length > 0 else {
        throw ForgeCryptoError(code, context)
    }
    var bytes = [UInt8](repeating: 0, count: Int(length))
    let written = bytes.withUnsafeMutableBufferPointer { buffer in
        var cursor = buffer.baseAddress
        return encode(&cursor)
    }
    guard written == length else {
        throw ForgeCryptoError(code, context)
    }
    return bytes
}

/// Decodes one object with an OpenSSL `d2i_*` function, hands it to `takeOwnership` at once, and
/// then insists the encoding spans all of `bytes` (trailing data is an error, not silently ignored).
func decodedExactly<Owner>(
    _ bytes: [UInt8],
    failure code: ForgeCryptoError.Code,
    function: String,
    decode: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?,
    takeOwnership: (OpaquePointer) -> Owner
) throws -> Owner {
    guard !bytes.isEmpty else {
        throw ForgeCryptoError(code, "\(function): empty input")
    }
    let (object, consumed) = bytes.withUnsafeBufferPointer { buffer -> (OpaquePointer?, Int) in
        let start = buffer.baseAddress
        var cursor = start
        let object = decode(&cursor, buffer.count)
        guard let start, let cursor else { return (object, 0) }
        return (object, start.distance(to: cursor))
    }
    guard let object else {
        throw ForgeCryptoError(code, function)
    }
    let owner = takeOwnership(object)
    guard consumed == bytes.count else {
        throw ForgeCryptoError(code, "\(function): \(bytes.count - consumed) trailing bytes after the encoded object")
    }
    return owner
}

/// The dotted-decimal text of an `ASN1_OBJECT` (never a short name).
func dottedOID(of object: OpaquePointer, failure code: ForgeCryptoError.Code) throws -> String {
    let length = OBJ_obj2txt(nil, 0, object, 1)
    guard length > 0 else {
        throw ForgeCryptoError(code, "OBJ_obj2txt")
    }
    var buffer = [CChar](repeating: 0, count: Int(length) + 1)
    guard OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1) == length else {
        throw ForgeCryptoError(code, "OBJ_obj2txt")
    }
    return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The bytes of an `ASN1_STRING` (OCTET STRING, INTEGER magnitude, ...), copied out.
func contents(of string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
    let length = Int(ASN1_STRING_length(string))
    guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: length))
}

/// The DER payloads of the PEM blocks in `pem` whose label is in `labels`, in order; other blocks are skipped.
/// Throws if no such block exists or a block is malformed (bad base64, missing end line).
func pemBlocks(
    in pem: String,
    labeled labels: Set<String>,
    failure code: ForgeCryptoError.Code,
    stoppingAfterFirst: Bool
) throws -> [[UInt8]] {
    OpenSSLErrorQueue.clear()
    var skippedLabels: [String] = []
    let blocks = try withMemoryBIO(reading: pem, failure: code) { bio in
        var blocks: [[UInt8]] = []
        while !(stoppingAfterFirst && !blocks.isEmpty) {
            var label: UnsafeMutablePointer<CChar>?
            var header: UnsafeMutablePointer<CChar>?
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            let rc = PEM_read_bio(bio, &label, &header, &data, &length)
            defer {
                COpenSSL_free(label)
                COpenSSL_free(header)
                COpenSSL_free(data)
            }
            guard rc == 1 else {
                guard OpenSSLErrorQueue.lastErrorIsPEMNoStartLine else {
                    throw ForgeCryptoError(code, "PEM_read_bio")
                }
                break
            }
            guard let label, let data else {
                throw ForgeCryptoError(code, "PEM_read_bio")
            }
            if let header, header.pointee != 0 {
                throw ForgeCryptoError(code, "PEM_read_bio: PEM headers (e.g. a Proc-Type: 4,ENCRYPTED key) are not supported")
            }
            let labelText = String(cString: label)
            guard labels.contains(labelText) else {
                skippedLabels.append(labelText)
                continue
            }
            blocks.append(Array(UnsafeBufferPointer(start: data, count: length)))
        }
        return blocks
    }
    guard !blocks.isEmpty else {
        let expected = labels.sorted().joined(separator: " or ")
        throw ForgeCryptoError(
            code, skippedLabels.isEmpty ? "PEM_read_bio" : "PEM_read_bio: no \(expected) block, only \(skippedLabels.joined(separator: ", "))")
    }
    OpenSSLErrorQueue.clear()
    return blocks
}

/// PEM armour with 64-character lines and LF line endings, as OpenSSL writes it.
enum PEM {
    /// Wraps `der` between `-----BEGIN <label>-----` and `-----END <label>-----`.
    static func encode(_ der: [UInt8], label: String) -> String {
        let base64 = Data(der).base64EncodedString()
        var lines = ["-----BEGIN \(label)-----"]
        var lineStart = base64.startIndex
        while lineStart < base64.endIndex {
            let lineEnd = base64.index(lineStart, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[lineStart..<lineEnd]))
            lineStart = lineEnd
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }
}
