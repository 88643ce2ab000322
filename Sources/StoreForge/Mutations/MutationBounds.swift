/// The most a recipe or a mutation parameter may ask for. A recipe is input (a file anyone can write),
/// so every size it controls is bounded before anything is allocated, and every index is checked.
public enum MutationBounds {
    /// Mutation steps in one make (a vector's own plus a recipe's): each step may re-sign the receipt.
    public static let maxSteps = 256
    /// Bytes a step may add (`trailing-bytes`, `payload-trailing-bytes`) or carry as hex (`hex=`).
    public static let maxAddedBytes = 1 << 20
    /// `nested-sequences` depth: 2 bytes a level, so 2 MiB at most.
    public static let maxNestingDepth = 1_000_000
    /// `signer-count`: SignerInfos written.
    public static let maxSignerInfos = 16
    /// `layout` econtent=constructed-N: segments of the eContent.
    public static let maxSegments = 4096
    /// `truncate` length, either way: far beyond any receipt, far from integer overflow.
    public static let maxTruncation = 1 << 30
    /// Certificates a JWS recipe may put in `x5c` (`jws.x5c roles=…`).
    public static let maxChainEntries = 1000
    /// Attribute types and versions: the INTEGER range receipts use, and then some.
    public static let attributeNumbers = Int(Int32.min)...Int(Int32.max)
}
