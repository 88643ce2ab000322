import _ForgeSupport
import StoreServer
import Testing

/// Issue 39 item 11: the App Store Connect-shaped key `forge ca api-key` writes is made by the library that checks
/// its tokens; the CLI only writes it.
@Suite("IssuedAPIKey: an App Store Connect-shaped TEST key")
struct IssuedAPIKeyTests {
    @Test("A seed gives the same key id, issuer id and key; the shapes are App Store Connect's; ServerAPIKey reads it back")
    func seededAndShaped() throws {
        let first = try IssuedAPIKey.generate(seed: 7)
        let again = try IssuedAPIKey.generate(seed: 7)
        #expect(first.keyID == again.keyID && first.issuerID == again.issuerID && first.privateKeyPEM == again.privateKeyPEM)
        let other = try IssuedAPIKey.generate(seed: 8)
        #expect(other.keyID != first.keyID && other.privateKeyPEM != first.privateKeyPEM)
        for key in [first, other, try IssuedAPIKey.generate()] {
            #expect(key.keyID.count == 10 && key.keyID.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }, "\(key.keyID)")
            let groups = key.issuerID.split(separator: "-").map(\.count)
            #expect(groups == [8, 4, 4, 4, 12] && key.issuerID == key.issuerID.lowercased(), "\(key.issuerID)")
            #expect(key.issuerID.split(separator: "-")[2].first == "4", "version 4: \(key.issuerID)")
            #expect(key.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            #expect(key.fileName == "AuthKey_\(key.keyID).p8")
            let read = try ServerAPIKey(id: key.keyID, pem: key.privateKeyPEM)
            #expect(read.id == key.keyID)
        }
    }
}
