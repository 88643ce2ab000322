import _ForgeSupport

/// What a `--target` names, parsed once: every command, report and check agrees on it.
///
/// `swift:NAME` is a validator in the runner's own process (`swift:reference`); `exec:`, `exit:` and
/// `stdio:` run a command, split like shell words (quotes and backslashes, no expansion); `http://` and
/// `https://` speak the harness protocol, or a mapping, over HTTP.
public struct Target: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case swift, exec, exit, stdio, http
    }

    public let kind: Kind
    /// The text as given, which reports and `results.json` cite.
    public let text: String
    /// The command of `exec:`, `exit:` and `stdio:` targets, as words.
    public let command: [String]
    /// The name of a `swift:` target, or the URL of an `http(s)://` one.
    public let address: String

    /// The forms a `--target` may take, for help and error messages.
    public static let forms = "swift:reference, exec:CMD, exit:CMD, stdio:CMD or http(s)://…"

    public init(_ text: String) throws(ConformanceError) {
        self.text = text
        if text.hasPrefix("http://") || text.hasPrefix("https://") {
            do throws(HTTPURL.Problem) { _ = try HTTPURL(text) } catch { throw ConformanceError(.invalidCommand, "\(RunOption.target) \(error)") }
            (kind, command, address) = (.http, [], text)
            return
        }
        guard let colon = text.firstIndex(of: ":"), let kind = Kind(rawValue: String(text[..<colon])), kind != .http else {
            throw ConformanceError(.invalidCommand, "\(RunOption.target) must be \(Self.forms), not '\(text)'")
        }
        let rest = String(text[text.index(after: colon)...])
        self.kind = kind
        if kind == .swift {
            guard !rest.isEmpty else { throw ConformanceError(.invalidCommand, "\(RunOption.target) swift: needs a name, e.g. swift:reference") }
            (command, address) = ([], rest)
        } else {
            do { command = try CommandWords.split(rest) } catch { throw ConformanceError(.invalidCommand, "\(RunOption.target) \(text): \(error.message)") }
            address = ""
        }
    }

    public var description: String { text }

    /// Seconds per vector before TIMEOUT unless the user says: a process per vector starts slower.
    public var defaultTimeout: Double {
        kind == .exec || kind == .exit ? HarnessLimits.defaultProcessTimeoutSeconds : HarnessLimits.defaultTimeoutSeconds
    }
}
