public import ReceiptCorpus

/// Which artefacts a run judges, and why: resolved once per target from `--artifacts`, the harness's hello and
/// the default, recorded in `results.json` and stated by every report. Vectors of the other artefacts are left
/// out of the run (not sent, not scored, not counted; `excluded` says how many), so a receipt validator is never
/// charged with StoreKit 2 JWS it was not written for, nor credited with rejecting them.
public struct ArtifactSelection: Codable, Sendable, Hashable {
    /// Where the selection came from.
    public enum Source: String, Codable, Sendable, Hashable, CaseIterable {
        /// `forge run --artifacts`, which wins over any declaration.
        case option
        /// The harness's hello declared `artifacts`.
        case hello
        /// No artifacts declared, but the features name one (`jws`): the older spelling, kept as an alias.
        case featureAlias = "feature-alias"
        /// Nothing declared: app receipts only.
        case `default`
    }

    /// The groups judged, in `ArtifactGroup` order.
    public var artifacts: [ArtifactGroup]
    public var source: Source
    /// Vectors otherwise selected (by --run, --skip and --shard) left out because their artefact was not.
    public var excluded: Int

    public init(artifacts: [ArtifactGroup], source: Source, excluded: Int = 0) {
        self.artifacts = Array(Set(artifacts)).sorted()
        self.source = source
        self.excluded = excluded
    }

    /// Features that name an artefact: before artefacts were a selection, JWS vectors needed the feature `jws`.
    /// Declared with no artifacts, it still selects them (JWS only); `--features jws` is accepted for it.
    public static let featureAliases: Set<String> = [ArtifactGroup.jws.rawValue]

    /// What a target that declares nothing judges: receipts, the artefact every `exit:` harness was written for.
    public static let defaultArtifacts: [ArtifactGroup] = [.receipt]

    /// The selection for a harness that said `hello` (nil when the handshake failed): `--artifacts` when given,
    /// else the hello's `artifacts`, else a feature named like an artefact (`jws`, the alias), else receipts.
    public static func resolve(option: [ArtifactGroup]?, hello: HarnessHello?) -> ArtifactSelection {
        if let option, !option.isEmpty { return ArtifactSelection(artifacts: option, source: .option) }
        if let declared = hello?.artifacts, !declared.isEmpty { return ArtifactSelection(artifacts: declared, source: .hello) }
        let aliased = ArtifactGroup.allCases.filter { featureAliases.contains($0.rawValue) && hello?.features.contains($0.rawValue) == true }
        if !aliased.isEmpty { return ArtifactSelection(artifacts: aliased, source: .featureAlias) }
        return ArtifactSelection(artifacts: defaultArtifacts, source: .default)
    }

    /// Whether `vector`'s artefact is selected.
    public func includes(_ vector: Vector) -> Bool { artifacts.contains(vector.context.artifactKind.group) }

    /// What `--artifacts` would be given to select exactly this: `receipt`, `jws` or `all`.
    public var optionValue: String { artifacts == ArtifactGroup.allCases ? "all" : artifacts.map(\.rawValue).joined(separator: ",") }

    /// One line every report shows: what was judged and why, e.g. "artifacts: receipt (default: the target
    /// declares none; pass --artifacts all to include StoreKit 2 JWS); 162 vectors of other artefacts not run".
    public var summary: String {
        let names = artifacts.isEmpty ? "none" : artifacts.map(\.rawValue).joined(separator: ", ")
        let missing = ArtifactGroup.allCases.filter { !artifacts.contains($0) }
        let widen = missing.isEmpty ? "" : "; pass \(RunOption.artifacts) all to include \(missing.map(\.displayName).joined(separator: " and "))"
        let why: String =
            switch source {
            case .option: "\(RunOption.artifacts) \(optionValue)"
            case .hello: "declared by the harness's hello"
            case .featureAlias: "the feature `jws`, an alias of \(RunOption.artifacts) jws\(widen)"
            case .default: "default: the target declares none\(widen)"
            }
        let left = excluded == 0 ? "" : "; \(excluded) vector\(excluded == 1 ? "" : "s") of other artefacts not run"
        return "artifacts: \(names) (\(why))\(left)"
    }

    /// Said once on stderr when the alias decided: the feature `jws` now means JWS only.
    public static let aliasNote =
        "the feature `jws` is an alias of \(RunOption.artifacts) jws: only StoreKit 2 JWS vectors are judged (a harness declares \"artifacts\": [\"receipt\", \"jws\"] in its hello, or pass \(RunOption.artifacts) all, to judge receipts too)"
}

/// The corpus a run judged: where it was and the SHA-256 of its `manifest.json` (which lists every file's own
/// digest, so it names the bytes of the whole corpus). Recorded in `results.json`; shown by the reports.
public struct JudgedCorpus: Codable, Sendable, Hashable {
    /// The vectors directory, absolute.
    public var path: String
    /// Lowercase hex SHA-256 of `manifest.json`'s bytes.
    public var manifestSHA256: String

    public init(path: String, manifestSHA256: String) {
        self.path = path
        self.manifestSHA256 = manifestSHA256
    }
}
