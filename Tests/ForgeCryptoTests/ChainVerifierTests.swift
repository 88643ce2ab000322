import ForgeCrypto
import Testing

@Suite struct ChainVerifierTests {
    @Test func trustsTheChainInsideItsValidityLeafFirst() throws {
        let chain = try TestChain.shared.get()
        let result = ChainVerifier.verify(
            leaf: chain.leaf, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jun2025)
        #expect(result == .trusted(chain: [chain.leaf, chain.intermediate, chain.root]))
    }

    @Test func rejectsTheChainAfterTheLeafExpired() throws {
        let chain = try TestChain.shared.get()
        let result = ChainVerifier.verify(
            leaf: chain.leaf, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jan2031)
        #expect(result == .untrusted(reason: "certificate has expired", code: 10, depth: 0))
    }

    @Test func rejectsBeforeTheLeafIsValid() throws {
        let chain = try TestChain.shared.get()
        let result = ChainVerifier.verify(
            leaf: chain.leaf, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jan2016)
        #expect(result == .untrusted(reason: "certificate is not yet valid", code: 9, depth: 0))
    }

    @Test func rejectsUnderAnUnrelatedRoot() throws {
        let chain = try TestChain.shared.get()
        let unrelatedRoot = try X509Certificate.issue(
            TestChain.rootTemplate, subjectKey: chain.keys.unrelatedRoot.publicKey, issuer: nil, issuerKey: chain.keys.unrelatedRoot)
        let result = ChainVerifier.verify(
            leaf: chain.leaf, intermediates: [chain.intermediate], trustedRoots: [unrelatedRoot], at: Instant.jun2025)
        #expect(result == .untrusted(reason: "unable to get local issuer certificate", code: 20, depth: 1))
        #expect(
            ChainVerifier.verify(leaf: chain.leaf, intermediates: [], trustedRoots: [chain.root], at: Instant.jun2025)
                == .untrusted(reason: "unable to get local issuer certificate", code: 20, depth: 0))
    }

    @Test func ignoresValidityWhenNoTimeIsGiven() throws {
        let chain = try TestChain.shared.get()
        let expiredLeaf = try chain.issueLeaf(TestChain.leafTemplate(notBefore: Instant.jan2001, notAfter: Instant.jan2002))
        #expect(
            ChainVerifier.verify(leaf: expiredLeaf, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: nil)
                == .trusted(chain: [expiredLeaf, chain.intermediate, chain.root]))
        #expect(
            ChainVerifier.verify(leaf: expiredLeaf, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jun2025)
                == .untrusted(reason: "certificate has expired", code: 10, depth: 0))
    }

    @Test func trustsSHA1SignedCertificates() throws {
        let chain = try TestChain.shared.get()
        let result = ChainVerifier.verify(
            leaf: chain.sha1Leaf, intermediates: [chain.sha1Intermediate], trustedRoots: [chain.root], at: Instant.jun2025)
        #expect(result == .trusted(chain: [chain.sha1Leaf, chain.sha1Intermediate, chain.root]))
    }

    @Test func unknownCriticalExtensionsDoNotFailTheChain() throws {
        let chain = try TestChain.shared.get()
        let leaf = try chain.issueLeaf(
            TestChain.leafTemplate(extraExtensions: [.custom(oid: "1.3.6.1.4.1.55555.1", critical: true, derValue: [0x05, 0x00])]))
        #expect(leaf.isCritical(oid: "1.3.6.1.4.1.55555.1") == true)
        #expect(
            ChainVerifier.verify(leaf: leaf, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jun2025)
                == .trusted(chain: [leaf, chain.intermediate, chain.root]))
    }

    @Test func selfSignedStoreKitCertificateTrustsItself() throws {
        let chain = try TestChain.shared.get()
        #expect(
            ChainVerifier.verify(leaf: chain.storeKit, intermediates: [], trustedRoots: [chain.storeKit], at: Instant.jun2025)
                == .trusted(chain: [chain.storeKit]))
        guard case .untrusted = ChainVerifier.verify(leaf: chain.storeKit, intermediates: [], trustedRoots: [chain.root], at: Instant.jun2025)
        else {
            Issue.record("a self-signed certificate must not chain to an unrelated root")
            return
        }
    }

    @Test func rejectsAForgedSignature() throws {
        let chain = try TestChain.shared.get()
        let forged = try X509Certificate.issue(
            TestChain.leafTemplate(), subjectKey: chain.keys.leaf.publicKey, issuer: chain.intermediate, issuerKey: chain.keys.unrelatedRoot)
        #expect(!forged.isIssued(by: chain.intermediate))
        #expect(
            ChainVerifier.verify(leaf: forged, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jun2025)
                == .untrusted(reason: "certificate signature failure", code: 7, depth: 0))
    }
}
