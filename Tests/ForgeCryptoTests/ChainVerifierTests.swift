import ForgeCrypto
import Foundation
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
        #expect(result == .untrusted(ChainFailure(verifyError: 10, reason: "certificate has expired", depth: 0)))
    }

    @Test func rejectsBeforeTheLeafIsValid() throws {
        let chain = try TestChain.shared.get()
        let result = ChainVerifier.verify(
            leaf: chain.leaf, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jan2016)
        #expect(result == .untrusted(ChainFailure(verifyError: 9, reason: "certificate is not yet valid", depth: 0)))
    }

    @Test func rejectsUnderAnUnrelatedRoot() throws {
        let chain = try TestChain.shared.get()
        let unrelatedRoot = try X509Certificate.issue(
            TestChain.rootTemplate, subjectKey: chain.keys.unrelatedRoot.publicKey, issuer: nil, issuerKey: chain.keys.unrelatedRoot)
        let result = ChainVerifier.verify(
            leaf: chain.leaf, intermediates: [chain.intermediate], trustedRoots: [unrelatedRoot], at: Instant.jun2025)
        #expect(result == .untrusted(ChainFailure(verifyError: 20, reason: "unable to get local issuer certificate", depth: 1)))
        #expect(
            ChainVerifier.verify(leaf: chain.leaf, intermediates: [], trustedRoots: [chain.root], at: Instant.jun2025)
                == .untrusted(ChainFailure(verifyError: 20, reason: "unable to get local issuer certificate", depth: 0)))
    }

    /// Issue 39, item 7: the verifier says what kind of failure it found; callers no longer read OpenSSL's numbers.
    @Test func failuresAreTyped() throws {
        let chain = try TestChain.shared.get()
        let cases: [(intermediates: [X509Certificate], at: Date, kind: ChainFailure.Kind)] = [
            ([chain.intermediate], Instant.jan2031, .expired), ([chain.intermediate], Instant.jan2016, .notYetValid), ([], Instant.jun2025, .untrustedAnchor),
        ]
        for (intermediates, time, expected) in cases {
            let result = ChainVerifier.verify(leaf: chain.leaf, intermediates: intermediates, trustedRoots: [chain.root], at: time)
            guard case .untrusted(let failure) = result else {
                Issue.record("trusted at \(time)")
                continue
            }
            #expect(failure.kind == expected, "\(failure)")
        }
        #expect(ChainFailure(verifyError: 7, reason: "certificate signature failure", depth: 0).kind == .invalid)
        #expect(ChainFailure(verifyError: 18, reason: "self-signed certificate", depth: 0).kind == .untrustedAnchor)
    }

    @Test func ignoresValidityWhenNoTimeIsGiven() throws {
        let chain = try TestChain.shared.get()
        let expiredLeaf = try chain.issueLeaf(TestChain.leafTemplate(notBefore: Instant.jan2001, notAfter: Instant.jan2002))
        #expect(
            ChainVerifier.verify(leaf: expiredLeaf, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: nil)
                == .trusted(chain: [expiredLeaf, chain.intermediate, chain.root]))
        #expect(
            ChainVerifier.verify(leaf: expiredLeaf, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jun2025)
                == .untrusted(ChainFailure(verifyError: 10, reason: "certificate has expired", depth: 0)))
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
            case .untrusted(let failure) =
                ChainVerifier.verify(leaf: critical, intermediates: [chain.intermediate], trustedRoots: [chain.root], at: Instant.jun2025)
        else {
            Issue.record("a leaf with an unknown critical extension must not be trusted")
            return
        }
        #expect(failure.verifyError == 34 && failure.depth == 0 && failure.kind == .invalid, "\(failure.reason)")  // X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION
        #expect(failure.reason.contains("critical"))
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
                == .untrusted(ChainFailure(verifyError: 7, reason: "certificate signature failure", depth: 0)))
    }
}
