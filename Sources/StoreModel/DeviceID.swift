#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import _ForgeSupport

/// The identifier the device hash binds a receipt to.
public struct DeviceID: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, Codable { case uuid, mac }
    public let bytes: [UInt8]
    public let kind: Kind

    /// Parses a UUID (16 bytes, iOS `identifierForVendor`) or a MAC address (6 bytes, macOS).
    public init?(_ text: String) {
        let trimmed = text.trimmingWhitespace()
        if let uuid = UUID(uuidString: trimmed) {
            bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            kind = .uuid
            return
        }
        let parts = trimmed.split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 }) else { return nil }
        let octets = parts.compactMap { UInt8($0, radix: 16) }
        guard octets.count == 6 else { return nil }
        bytes = octets
        kind = .mac
    }

    public init(uuidBytes: [UInt8]) {
        precondition(uuidBytes.count == 16)
        bytes = uuidBytes
        kind = .uuid
    }

    public var description: String {
        switch kind {
        case .mac:
            return bytes.map { hexString([$0]) }.joined(separator: ":")
        case .uuid:
            let hex = hexString(bytes).uppercased()
            let cuts = [8, 12, 16, 20]
            var out = ""
            for (index, character) in hex.enumerated() {
                if cuts.contains(index) { out += "-" }
                out.append(character)
            }
            return out
        }
    }
}

extension SeededGenerator {
    /// A random (version 4, RFC 4122 variant) UUID from the next 16 bytes.
    public mutating func uuid() -> DeviceID {
        var bytes = self.bytes(16)
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        return DeviceID(uuidBytes: bytes)
    }
}
