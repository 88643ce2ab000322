public import ArgumentParser
public import ReceiptConformance

/// `--granularity none|coarse|fine`, parsed and listed by ArgumentParser from the type itself.
extension HarnessHello.Granularity: ExpressibleByArgument {}
