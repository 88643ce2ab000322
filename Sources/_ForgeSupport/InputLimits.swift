/// Bounds every decoder shares, whatever the artefact: receipts (``ReceiptLimits``) and JWS (``JWSLimits``) refuse
/// more before doing the work it would cost.
public enum InputLimits {
    /// Bytes of one input: the largest real receipts are about 100 KiB, real JWS a few KiB.
    public static let maximumSize = 16 << 20
    /// Certificates one artefact may embed: Apple embeds 3 (Xcode 1).
    public static let maximumCertificates = 16
    /// Elements of any one constructed node (receipt attributes, purchases): a receipt with 300 purchases has about 320.
    public static let maximumElements = 100_000
}
