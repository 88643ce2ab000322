public import StoreModel
#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import ForgeCrypto
public import ReceiptCorpus
import ReceiptModel
import _ForgeSupport

/// Writes the corpus: every vector's file, the trust anchors, the JSON Schemas and the manifest.
///
/// Deterministic: the keys are committed, every time is pinned and every seed derives from
/// `VectorSpec.corpusSeed` and the vector id, so two runs write identical bytes.
public struct CorpusGenerator: Sendable {
    /// Makes the receipt and the StoreKit 2 vectors.
    public let forge: Forge
    public let specs: [VectorSpec]
    /// File name → JSON Schema written into `schema/` beside the corpus's own (the conformance runner's
    /// protocol, results and baseline schemas). Passed in so this module need not depend on the runner's.
    public let additionalSchemas: [String: Data]

    public init(forge: Forge, specs: [VectorSpec] = VectorCatalogue.all, additionalSchemas: [String: Data] = [:]) {
        self.forge = forge
        self.specs = specs
        self.additionalSchemas = additionalSchemas
    }

    /// The manifest and every file it names, relative to the corpus directory.
    public func build() throws(ForgeError) -> (manifest: Manifest, files: [String: Data]) {
        var files: [String: Data] = [:]
        var anchors: [String: TrustAnchor] = [:]
        let receiptAnchors = [
            (TrustAnchorID.forgeRoot, forge.receiptPKI[.root].certificate.derRepresentation, "The receipt-forge TEST root (plays Apple Root CA)."),
            (
                TrustAnchorID.forgeStoreKit, forge.receiptPKI[.storeKit].certificate.derRepresentation,
                "The receipt-forge TEST StoreKit certificate (plays Xcode's StoreKit certificate)."
            ),
        ]
        let jwsRoot = forge.jwsPKI.certificate(.root), jwsXcode = forge.jwsPKI.certificate(.xcode)
        let jwsAnchors = [
            (TrustAnchorID.forgeJWSRoot, jwsRoot.derRepresentation, "The receipt-forge EC TEST root for StoreKit 2 JWS (plays Apple Root CA - G3)."),
            (TrustAnchorID.forgeJWSXcode, jwsXcode.derRepresentation, "The receipt-forge EC TEST certificate of Xcode-signed JWS (plays StoreKit Testing in Xcode)."),
        ]
        let transactionReceiptAnchors = [
            (
                TrustAnchorID.forgeITunesStoreCA, forge.transactionReceiptPKI.certificateDER(.iTunesStoreCA),
                "The receipt-forge TEST iTunes Store CA-like authority: the anchor of version 2 iOS 6 transaction receipts (their chain is the signer and it)."
            ),
            (
                TrustAnchorID.forgeWWDRSHA1, forge.receiptPKI.certificateDER(.intermediateSHA1),
                "The receipt-forge SHA-1-era TEST WWDR-like intermediate: the anchor of version 3 iOS 6 transaction receipts (not a root: a partial chain)."
            ),
        ]
        for (id, der, text) in receiptAnchors + jwsAnchors + transactionReceiptAnchors {
            files["anchors/\(id).der"] = Data(der)
            anchors[id] = TrustAnchor(file: "anchors/\(id).der", sha256: try sha256(der), testOnly: true, description: text)
        }
        var vectors: [Vector] = []
        for spec in specs {
            let (bytes, context) = try spec.make(forge: forge)
            let file = "\(spec.vectorID.family)/\(spec.vectorID.name).\(spec.fileExtension)"
            files[file] = Data(bytes)
            vectors.append(
                Vector(
                    id: spec.vectorID, revision: spec.revision, description: spec.description, file: file, sha256: try sha256(bytes), flags: spec.flags,
                    severity: spec.severity, features: spec.features, canary: spec.canary, context: context,
                    expected: Expectation(
                        verdict: spec.verdict, errorClasses: spec.errorClasses,
                        decoded: spec.verdict == .valid && spec.artifact == .receipt ? Self.decoded(bytes) : nil),
                    provenance: try spec.provenance()))
        }
        let manifest = Manifest(
            schemaVersion: 1, suite: Suite(name: "receipt-forge", version: "2026.11.0"),
            generator: Generator(name: "forge", version: "0.1.0", seed: String(VectorSpec.corpusSeed)),
            trustAnchors: anchors, notes: VectorCatalogue.notes, features: VectorCatalogue.features,
            errorTaxonomy: VectorCatalogue.errorTaxonomy, profiles: VectorCatalogue.profiles, vectors: vectors)
        do {
            files["manifest.json"] = try ManifestIO.encode(manifest)
            for (name, schema) in try CorpusSchemas.all() { files["schema/\(name)"] = schema }
        } catch {
            throw ForgeError(.encodingFailed, "encoding the manifest: \(error)")
        }
        for (name, schema) in additionalSchemas.sorted(by: { $0.key < $1.key }) {
            // Silently replacing the corpus's own schema would publish one that does not describe the manifest.
            guard files["schema/\(name)"] == nil else {
                throw ForgeError(.conflictingOptions, "the additional schema \(name) would replace the corpus's own")
            }
            files["schema/\(name)"] = schema
        }
        return (manifest, files)
    }

    /// Writes the corpus as `directory`, whole: into a staging sibling that then replaces it (``StagedFolder``).
    /// The folder must be new, empty or an earlier corpus (its `manifest.json` written by forge): of that, the
    /// files its manifest listed are removed and a `README.md` is kept; anything else refuses, naming it.
    /// The staging folder is made through `slot`, so an interrupt can discard it (``StagingSlot``).
    public func write(to directory: URL, slot: StagingSlot = StagingSlot()) throws(ForgeError) -> Manifest {
        let (manifest, files) = try build()
        let folder = try slot.stage { () throws(ForgeError) in
            try StagedFolder(replacing: directory, kept: ["README.md"]) { existing throws(ForgeError) in
                Self.files(listedIn: existing).union(files.keys.filter { $0.hasPrefix("schema/") })
            }
        }
        defer { folder.discard() }
        for (path, data) in files.sorted(by: { $0.key < $1.key }) { try folder.write(data, to: path) }
        if let left = try folder.commit() {
            throw ForgeError(.ioFailed, "the corpus is written, but files appeared in the old one meanwhile; they are in \(left.path)")
        }
        return manifest
    }

    /// The files an earlier corpus in `directory` consists of, by its manifest; none when there is no manifest of
    /// ours there (then every file in the folder is the user's).
    static func files(listedIn directory: URL) -> Set<String> {
        guard let manifest = try? ManifestIO.load(from: directory), manifest.generator.name == "forge" else { return [] }
        return Set(manifest.vectors.map(\.file) + manifest.trustAnchors.values.map(\.file) + ["manifest.json"])
    }

    private func sha256(_ bytes: [UInt8]) throws(ForgeError) -> String {
        hexString(try ForgeError.wrapping("hashing a vector") { try DigestAlgorithm.sha256.digest(bytes) })
    }

    /// What a decoding validator must report for a valid vector, dates normalised to `YYYY-MM-DDThh:mm:ssZ`.
    static func decoded(_ bytes: [UInt8]) -> DecodedReceipt? {
        guard let der = try? ReceiptInput.decode(bytes).der, let payload = try? ReceiptContainer(berEncoded: der).payload,
            let receipt = try? AppReceipt(payloadBytes: payload)
        else { return nil }
        func normal(_ date: Date?) -> String? { date.map { ReceiptDate.format($0) } }
        let purchases = receipt.inAppPurchases.map { purchase in
            DecodedPurchase(
                productId: purchase.productID ?? "", quantity: Int(purchase.quantity ?? 1), transactionId: purchase.transactionID ?? "",
                originalTransactionId: purchase.originalTransactionID, purchaseDate: normal(purchase.purchaseDate) ?? "",
                expiresDate: normal(purchase.expiresDate), cancellationDate: normal(purchase.cancellationDate))
        }
        return DecodedReceipt(
            bundleId: receipt.bundleID ?? "", appVersion: receipt.appVersion ?? "", originalAppVersion: receipt.originalAppVersion,
            receiptType: receipt.receiptType, creationDate: normal(receipt.creationDate) ?? "",
            expirationDate: normal(receipt.expirationDate), inApp: purchases)
    }
}
