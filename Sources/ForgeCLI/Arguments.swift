public import ArgumentParser
package import ReceiptConformance
import _ForgeSupport
import StoreModel

/// `--granularity none|coarse|fine`, parsed and listed by ArgumentParser from the type itself.
extension HarnessHello.Granularity: ExpressibleByArgument {}

extension SingleValueParsingStrategy {
    /// A number option: the next argument is its value even when it starts with `-`, so `--renewals -1` reaches
    /// the option's range check ("--renewals must be an integer between 0 and 10000, not -1") instead of
    /// ArgumentParser's "Missing value for --renewals" (it takes `-1` for a short flag). Every integer option of
    /// `forge make` and `forge jws make` is parsed so.
    static var number: SingleValueParsingStrategy { .unconditional }
}
