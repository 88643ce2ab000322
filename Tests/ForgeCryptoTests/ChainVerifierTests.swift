import ForgeCrypto
import Testing

@Suite(.timeLimit(.minutes(2))) struct ChainVerifierTests {
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

    @Test("An unknown critical extension fails the chain (RFC 5280 §4.2); the same extension non-critical does not")
    func unknownCriticalExtensionsFailTheChain() throws {
        let chain = try TestChain.shared.get()
        let critical = try chain.issueLeaf(
            TestChain.leafTemplate(extraExtensions: [.custom(oid: "1.3.6.1.4.1.55555.1", critical: true, derValue: [0x05, 0x00])]))
        #expect(critical.isCritical(oid: "1.3.6.1.4.1.55555.1") == true)
        guard
            case .untrusted(let reason, let code, let depth) =
                ChainVerifier.verify(leaf: critical, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jun2025)
        else {
            Issue.record("a leaf with an unknown critical extension must not be trusted")
            return
        }
        #expect(code == 34 && depth == 0, "\(reason)")  // X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION
        #expect(reason.contains("critical"))
        let plain = try chain.issueLeaf(
            TestChain.leafTemplate(extraExtensions: [.custom(oid: "1.3.6.1.4.1.55555.1", critical: false, derValue: [0x05, 0x00])]))
        #expect(
            ChainVerifier.verify(leaf: plain, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jun2025)
                == .trusted(chain: [plain, chain.intermediate, chain.root]))
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
