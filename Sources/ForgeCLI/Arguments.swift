public import ArgumentParser
public import ReceiptConformance
import ForgeSupport
import StoreModel

/// `--granularity none|coarse|fine`, parsed and listed by ArgumentParser from the type itself.
extension HarnessHello.Granularity: ExpressibleByArgument {}
