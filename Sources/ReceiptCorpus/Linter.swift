#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport

/// One problem in the manifest. A value, not an error: lint reports everything it finds at once.
public struct LintFinding: Sendable, Hashable, CustomStringConvertible {
    /// The vector concerned; nil for manifest-wide findings (trust anchors, profiles, canaries).
    public let vectorID: VectorID?
    /// One of the `Linter.Rule` names, stable for tooling.
    public let rule: String
    public let message: String

    public init(vectorID: VectorID?, rule: String, message: String) {
        self.vectorID = vectorID
        self.rule = rule
        self.message = message
    }

    public var description: String { "\(vectorID?.text ?? "manifest"): [\(rule)] \(message)" }
}

/// Checks a manifest for the consistency the corpus promises its users (see `lint`).
public enum Linter {
    /// The rule names findings carry.
    public enum Rule {
        public static let schemaVersion = "schema-version"
        public static let idFormat = "id-format"
        public static let idDuplicate = "id-duplicate"
        public static let idFamily = "id-family"
        public static let revision = "revision"
        /// A file path that is absolute or climbs out of the vectors directory.
        public static let filePath = "file-path"
        public static let fileMissing = "file-missing"
        /// A malformed digest, or one that does not match the file's bytes.
        public static let fileDigest = "file-sha256"
        public static let flagUnknown = "flag-unknown"
        public static let acceptableWithoutFlag = "acceptable-without-flag"
        public static let invalidWithoutErrorClass = "invalid-without-error-class"
        public static let errorClassUnknown = "error-class-unknown"
        public static let validWithErrorClass = "valid-with-error-class"
        public static let nowFormat = "now-format"
        public static let trustAnchorUnknown = "trust-anchor-unknown"
        public static let featureUnknown = "feature-unknown"
        public static let canaryMissing = "canary-missing"
        public static let canaryNotValid = "canary-not-valid"
    }

    /// Checks: schemaVersion is 1; ids match `^[a-z0-9][a-z0-9-]*(::[a-z0-9][a-z0-9-]*)+$`, are unique, and
    /// their family is the file's first path component; revision ≥ 1; flags have notes; acceptable vectors
    /// have a flag; invalid vectors have error classes, valid ones none, and all are taxonomy keys;
    /// `context.now` is "YYYY-MM-DDThh:mm:ssZ"; trust anchors and features are known; profiles name only
    /// flags that have notes; a canary exists and every canary is valid. With a
    /// `vectorsDirectory`, vector and trust-anchor files must exist there with the manifest's SHA-256.
    /// Findings are sorted by (vectorID ?? "", rule, message).
    public static func lint(_ manifest: Manifest, vectorsDirectory: URL?) -> [LintFinding] {
        var run = LintRun(manifest: manifest, vectorsDirectory: vectorsDirectory)
        run.checkManifest()
        for vector in manifest.vectors { run.check(vector) }
        return run.findings.sorted {
            ($0.vectorID ?? "", $0.rule, $0.message) < ($1.vectorID ?? "", $1.rule, $1.message)
        }
    }
}

/// One lint pass: the manifest, where its files are, and what has been found so far.
private struct LintRun {
    let manifest: Manifest
    let vectorsDirectory: URL?
    var findings: [LintFinding] = []

    private typealias Rule = Linter.Rule

    mutating func checkManifest() {
        if manifest.schemaVersion != Manifest.currentSchemaVersion {
            report(nil, Rule.schemaVersion, "schemaVersion is \(manifest.schemaVersion), expected \(Manifest.currentSchemaVersion)")
        }
        let idCounts = Dictionary(manifest.vectors.map { ($0.id, 1) }, uniquingKeysWith: +)
        for (id, count) in idCounts where count > 1 {
            report(id, Rule.idDuplicate, "id appears \(count) times")
        }
        for (id, anchor) in manifest.trustAnchors {
            checkFile(anchor.file, sha256: anchor.sha256, owner: nil, label: "trust anchor '\(id)' file")
        }
        for (name, profile) in manifest.profiles {
            for flag in profile.acceptable.keys {
                if manifest.notes[flag] == nil {
                    report(nil, Rule.flagUnknown, "profile '\(name)' names flag '\(flag)', which has no note")
                }
            }
        }
        if !manifest.vectors.contains(where: \.canary) {
            report(nil, Rule.canaryMissing, "no vector is a canary")
        }
    }

    mutating func check(_ vector: Vector) {
        let id = vector.id
        if !id.isWellFormed {
            report(id, Rule.idFormat, "id must be family::name in lowercase letters, digits and '-'")
        } else if let directory = vector.file.split(separator: "/").first, directory != id.family {
            report(id, Rule.idFamily, "family '\(id.family)' but file is under '\(directory)/'")
        }
        if vector.revision < 1 {
            report(id, Rule.revision, "revision is \(vector.revision), must be at least 1")
        }
        checkFile(vector.file, sha256: vector.sha256, owner: id, label: "file")

        for flag in vector.flags where manifest.notes[flag] == nil {
            report(id, Rule.flagUnknown, "flag '\(flag)' has no note")
        }
        let expected = vector.expected
        switch expected.verdict {
        case .acceptable where vector.flags.isEmpty:
            report(id, Rule.acceptableWithoutFlag, "acceptable vectors need a flag for profiles to resolve")
        case .invalid where expected.errorClasses.isEmpty:
            report(id, Rule.invalidWithoutErrorClass, "invalid vectors need at least one error class")
        case .valid where !expected.errorClasses.isEmpty:
            report(id, Rule.validWithErrorClass, "valid vectors carry no error classes")
        default:
            break
        }
        for errorClass in expected.errorClasses where manifest.errorTaxonomy[errorClass.rawValue] == nil {
            report(id, Rule.errorClassUnknown, "error class '\(errorClass)' is not in the taxonomy")
        }
        if !Self.isWellFormedTimestamp(vector.context.now) {
            report(id, Rule.nowFormat, "context.now '\(vector.context.now)' is not a YYYY-MM-DDThh:mm:ssZ date")
        }
        if manifest.trustAnchors[vector.context.trustAnchor] == nil {
            report(id, Rule.trustAnchorUnknown, "trust anchor '\(vector.context.trustAnchor)' is not in trustAnchors")
        }
        for feature in vector.features where manifest.features[feature] == nil {
            report(id, Rule.featureUnknown, "feature '\(feature)' is not in features")
        }
        if vector.canary && expected.verdict != .valid {
            report(id, Rule.canaryNotValid, "canary expects \(expected.verdict.rawValue); canaries must be valid")
        }
    }

    /// Path shape and digest form always; existence and digest match only when the directory is known.
    private mutating func checkFile(_ path: String, sha256: String, owner: VectorID?, label: String) {
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        if path.isEmpty || path.hasPrefix("/") || components.contains("..") {
            report(owner, Rule.filePath, "\(label) '\(path)' must be a relative path inside the vectors directory")
            return
        }
        guard sha256.count == 64, sha256.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            report(owner, Rule.fileDigest, "\(label) sha256 '\(sha256)' is not 64 lowercase hex digits")
            return
        }
        guard let vectorsDirectory else { return }
        let url = vectorsDirectory.appendingPathComponent(path)
        guard let bytes = try? Data(contentsOf: url) else {
            report(owner, Rule.fileMissing, "\(label) '\(path)' is missing or unreadable")
            return
        }
        let actual = CorpusDigest.sha256Hex(bytes)
        if actual != sha256 {
            report(owner, Rule.fileDigest, "\(label) '\(path)' has sha256 \(actual), manifest says \(sha256)")
        }
    }

    private mutating func report(_ vectorID: VectorID?, _ rule: String, _ message: String) {
        findings.append(LintFinding(vectorID: vectorID, rule: rule, message: message))
    }

    private static func isLowerAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    /// Exactly "YYYY-MM-DDThh:mm:ssZ" naming a real UTC instant (no leap seconds, no offsets, no fractions).
    static func isWellFormedTimestamp(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let pattern = Array("0000-00-00T00:00:00Z".utf8)
        guard bytes.count == pattern.count else { return false }
        for (byte, expected) in zip(bytes, pattern) {
            let matches = expected == UInt8(ascii: "0") ? (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) : byte == expected
            guard matches else { return false }
        }
        func number(_ range: Range<Int>) -> Int { bytes[range].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } }
        let (year, month, day) = (number(0..<4), number(5..<7), number(8..<10))
        guard (1...12).contains(month), number(11..<13) < 24, number(14..<16) < 60, number(17..<19) < 60 else { return false }
        let isLeapYear = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let daysInMonth = [31, isLeapYear ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...daysInMonth).contains(day)
    }
}
