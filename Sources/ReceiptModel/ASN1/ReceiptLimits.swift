import _ForgeSupport

/// How much a receipt may hold before the decoders refuse it (`ReceiptDecodingError.tooLarge`). Real
/// receipts are far below each bound; the bounds keep hostile input from asking for memory or time.
public enum ReceiptLimits {
    /// Bytes of input (`ReceiptInput.maximumSize`): the largest real receipts are about 100 KiB.
    public static let maximumInputSize = InputLimits.maximumSize
    /// Nesting followed inside an indefinite-length node (`BERReader.maximumDepth`): a receipt needs about 10.
    public static let maximumDepth = 48
    /// Elements of any one constructed node: a receipt with 300 purchases has about 320 top-level attributes.
    public static let maximumChildren = InputLimits.maximumElements
    /// Embedded certificates: Apple embeds 3.
    public static let maximumCertificates = InputLimits.maximumCertificates
    /// SignerInfos: a receipt has 1.
    public static let maximumSignerInfos = 16
    /// Digest algorithms in SignedData: a receipt names 1.
    public static let maximumDigestAlgorithms = 16
    /// Signed attributes of one SignerInfo: openssl writes 4, Apple none.
    public static let maximumSignedAttributes = 64
}
