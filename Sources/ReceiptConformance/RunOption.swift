/// The options of `forge run` that the runner's messages and reports point the user to: their spelling has this
/// one owner, and the CLI declares those options under these names, so a message cannot name a flag that is gone.
public enum RunOption: String, CaseIterable, Sendable, CustomStringConvertible {
    case target, mapping, vectors, run, profile, artifacts, features
    case maxErrors = "max-errors"
    case httpCA = "http-ca"

    /// `--max-errors`, as a message writes it.
    public var description: String { "--" + rawValue }
}
