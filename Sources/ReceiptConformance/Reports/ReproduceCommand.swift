public import ReceiptCorpus
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport

/// One shell line that sends one vector to the judged target as the run sent it, for the reports' failing rows:
///
/// - `exit:` — every `RF_*` variable the harness saw, the command, the vector's file on stdin;
/// - `exec:` — the `validate` message piped to the command;
/// - `stdio:` — the runner's `hello`, the `validate` line and `stop`, piped to the command;
/// - `http(s)://` (protocol) — the `validate` message POSTed with curl to `BASE/validate`;
/// - `swift:` targets and http mappings — `forge run` of that one vector.
///
/// Paths are absolute (the corpus as `results.json` records it); the command's own words are as given to
/// `--target`, so relative ones resolve from the directory `forge run` ran in. The receipt's base64 is not
/// pasted in (a vector may be a megabyte): `base64` reads it from the file. `--http-header` values are never
/// written into a report, so an HTTP line carries none.
public enum ReproduceCommand {
    /// The line for `vector` in the run `results`, or nil when the run recorded no target or corpus path
    /// (results written before either was recorded).
    public static func line(for vector: Vector, in results: RunResults, manifest: Manifest) -> String? {
        guard let text = results.target, let target = try? Target(text), let directory = results.corpus?.path else { return nil }
        let file = directory + "/" + vector.file
        switch target.kind {
        case .exit:
            let anchors = manifest.trustAnchors.mapValues { directory + "/" + $0.file }
            let environment = ExecValidator.exitCodeEnvironment(id: vector.id.text, context: vector.context, anchorFiles: anchors)
            return (environment.map { "\($0)=\(quoted($1))" } + target.command.map(quoted) + ["<", quoted(file)]).joined(separator: " ")
        case .exec:
            return printing([validateLine(vector)], file: file) + " | " + target.command.map(quoted).joined(separator: " ")
        case .stdio:
            let hello = String(decoding: (try? JSONEncoder().encode(RunnerHello(suite: results.suite))) ?? Data(), as: UTF8.self)
            let stop = String(decoding: (try? JSONEncoder().encode(StopMessage())) ?? Data(), as: UTF8.self)
            return printing([.text(hello), validateLine(vector), .text(stop)], file: file) + " | " + target.command.map(quoted).joined(separator: " ")
        case .http where results.mapping == nil:
            let base = target.address.hasSuffix("/") ? String(target.address.dropLast()) : target.address
            return printing([validateLine(vector)], file: file, newline: false)
                + " | curl -sS -H 'content-type: application/json' --data-binary @- " + quoted(base + "/validate")
        case .http, .swift:
            var words = ["forge", "run", RunOption.target.description, text]
            if let mapping = results.mapping { words += [RunOption.mapping.description, mapping] }
            words += [RunOption.vectors.description, directory, RunOption.run.description, vector.id.text]
            if let profile = results.profile { words += [RunOption.profile.description, profile] }
            return words.map(quoted).joined(separator: " ")
        }
    }

    /// A line of stdin: plain text, or a `validate` message whose base64 input is read from the file.
    private enum Line {
        case text(String)
        case validate(before: String, after: String)
    }

    /// The `validate` message as every transport sends it (seq 0), split around its `input.data`.
    private static func validateLine(_ vector: Vector) -> Line {
        // A marker no corpus can contain stands for the base64, then the message is cut there.
        let marker = "RF-INPUT-" + UUID().uuidString
        let message = String(decoding: ValidateRequest(seq: 0, id: vector.id.text, base64: marker, context: vector.context).jsonLine, as: UTF8.self)
        guard let range = message.firstRange(of: marker) else { return .text(message) }
        return .validate(before: String(message[..<range.lowerBound]), after: String(message[range.upperBound...]))
    }

    /// `printf '%s…' 'line' … "$(base64 < FILE | tr -d '\n')" …`: the lines, each ended by a newline unless not.
    private static func printing(_ lines: [Line], file: String, newline: Bool = true) -> String {
        var format = "", arguments: [String] = []
        for line in lines {
            switch line {
            case .text(let text):
                format += "%s"
                arguments.append(quoted(text))
            case .validate(let before, let after):
                format += "%s%s%s"
                arguments += [quoted(before), "\"$(base64 < \(quoted(file)) | tr -d '\\n')\"", quoted(after)]
            }
            if newline { format += "\\n" }
        }
        return "printf '\(format)' " + arguments.joined(separator: " ")
    }

    /// A shell word: bare when it is plainly safe, else single-quoted; with a control character (which would
    /// break the line), `$'…'` with escapes.
    static func quoted(_ word: String) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-".unicodeScalars)
        if !word.isEmpty, word.unicodeScalars.allSatisfy(plain.contains) { return word }
        if word.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            var out = "$'"
            for scalar in word.unicodeScalars {
                switch scalar {
                case "\\": out += "\\\\"
                case "'": out += "\\'"
                case "\n": out += "\\n"
                case "\t": out += "\\t"
                case "\r": out += "\\r"
                case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                    out += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "'"
        }
        return "'" + word.replacing("'", with: "'\\''") + "'"
    }
}
