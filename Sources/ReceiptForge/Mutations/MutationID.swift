/// The id of every mutation in ``Mutation/catalogue``, owned once: the catalogue defines them, the vector
/// catalogue and the mutant generator name them by case, and recipes (files) carry the raw value.
public enum MutationID: String, Sendable, Hashable, CaseIterable, Codable {
    case dropAttribute = "drop-attribute"
    case setAttribute = "set-attribute"
    case addAttribute = "add-attribute"
    case retagAttribute = "retag-attribute"
    case integerLeadingZero = "integer-leading-zero"
    case purchaseSetAttribute = "purchase-set-attribute"
    case purchaseDropAttribute = "purchase-drop-attribute"
    case reverseOrder = "reverse-order"
    case payloadTrailingBytes = "payload-trailing-bytes"
    case digestOid = "digest-oid"
    case signerDigestOid = "signer-digest-oid"
    case hashAlgorithm = "hash-algorithm"
    case consistentDigest = "consistent-digest"
    case signatureAlgorithmOid = "signature-algorithm-oid"
    case signWith = "sign-with"
    case signedAttributes = "signed-attributes"
    case flipSignatureBit = "flip-signature-bit"
    case signerCount = "signer-count"
    case signerSerial = "signer-serial"
    case emptySignature = "empty-signature"
    case certificateOrder = "certificate-order"
    case dropCertificate = "drop-certificate"
    case addCertificate = "add-certificate"
    case embedCertificate = "embed-certificate"
    case reissueLeaf = "reissue-leaf"
    case reissueIntermediate = "reissue-intermediate"
    case leafValidity = "leaf-validity"
    case layout
    case trailingBytes = "trailing-bytes"
    case truncate
    case nestedSequences = "nested-sequences"
    case hugeDeclaredLength = "huge-declared-length"
    case flipPayloadBit = "flip-payload-bit"
    case transport
    case jwsInstead = "jws-instead"
}
