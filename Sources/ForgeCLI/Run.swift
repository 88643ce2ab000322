import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import ReceiptConformance
import ReceiptCorpus
import ReceiptModel
import ReferenceValidation
import _ForgeSupport
import StoreModel
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the corpus against a validator and judge it.",
        discussion: """
            TARGETS (--target; give several to compare them: differential mode)
              swift:reference
                  The reference validator, in process.
              swift:reference-online
                  The same, with online checks: it declares online and asks OCSP
                  about the chains of online vectors, as Apple's verifiers with
                  enableOnlineChecks do (the responder: started by forge run).
              exec:CMD
                  One process per vector: the validate message (JSON) on stdin,
                  one reply (JSON) on stdout. `forge validate --harness` is one.
              exit:CMD
                  One process per vector: the receipt bytes on stdin, the context
                  in RF_ID, RF_NOW, RF_TRUST_ANCHOR (path of the anchor's DER file),
                  RF_BUNDLE_ID, RF_APP_VERSION, RF_DEVICE_ID, RF_ENVIRONMENT, RF_ARTIFACT (receipt or jws-*), RF_APP_APPLE_ID, RF_OCSP_RESPONDER (an online vector's OCSP responder, else empty).
                  Exit 0 accepts, 1 rejects (first stdout line: the error class),
                  anything else is an error. See examples/openssl-harness.sh.
              stdio:CMD
                  One persistent process speaking NDJSON: hello both ways, then
                  validate requests answered by seq in any order, then stop.
                  Restarted after a timeout or a crash.
              http://HOST:PORT/BASE, https://…
                  The same messages over HTTP: GET BASE/hello, POST BASE/validate.
                  With --mapping verifyreceipt: POST {"receipt-data","password"}
                  and read Apple's status codes; --mapping FILE adapts any JSON API.
                  Run by forge-http (built by `swift build`), which forge starts.
            CMD is split like shell words (quote paths with spaces), not expanded.

            ARTIFACTS (--artifacts receipt|jws|all)
              A run judges app receipts, StoreKit 2 JWS or both. Default: what the
              harness's hello declares ("artifacts": ["receipt", "jws"]), else
              receipt; swift:reference declares both. --artifacts wins over a
              declaration (an artefact the hello leaves out is SKIP, with the
              reason). A target declaring the feature jws (or --features jws)
              and no artifacts judges JWS only: an alias, said on stderr. Vectors
              of other artefacts are not sent and not counted; the summary says
              how many, what was selected and why. Canaries run per artefact.

            OUTCOMES (decided by the runner, never by the harness)
              PASS, FALSE_ACCEPT, FALSE_REJECT, WRONG_REASON, WRONG_DECODE,
              ACCEPTABLE, XFAIL, XPASS, CHANGED_FAILURE, SKIP, ERROR, TIMEOUT, CRASH.
              Canaries run first: if the harness fails a valid canary, the run
              stops with a diagnosis before any negative vector is scored.

            EXIT CODES
              0   conformant (given the baseline)
              1   conformance failure: a false accept or reject, a wrong reason or
                  decode, XPASS, CHANGED_FAILURE, or an expired baseline entry
              2   infrastructure failure: canaries, handshake, unreachable target,
                  ERROR/TIMEOUT/CRASH beyond --max-errors
              64  usage error; --run/--skip patterns that select no vector
              65  bad data: corpus, baseline, mapping or results file
              66  a --baseline file that does not exist
              130, 143  interrupted (Ctrl-C, SIGTERM): harnesses killed, no reports

            EXAMPLES
              forge run --target swift:reference --profile apple-compatible
              forge run --target 'exec:./my-harness --strict' --junit junit.xml
              forge run --target 'stdio:python3 harness.py' --baseline known.json
              forge validate --listen 127.0.0.1:8080 &
              forge run --target http://127.0.0.1:8080/verifyReceipt \\
                  --mapping verifyreceipt --html report.html
              forge run --target swift:reference --target exit:./other.sh
            """,
        subcommands: [Merge.self, Matrix.self])

    @Option(
        name: .customLong(RunOption.target.rawValue), help: ArgumentHelp("The validator under test (repeatable for differential mode); see TARGETS above.", valueName: "target"))
    var target: [String] = []
    @Option(
        name: .customLong(RunOption.mapping.rawValue),
        help: ArgumentHelp("For http(s) targets: 'verifyreceipt' or a response mapping file, instead of the harness protocol.", valueName: "mapping"))
    var mapping: String?
    @Option(name: .customLong("http-header"), help: ArgumentHelp("A header sent with every HTTP request (repeatable).", valueName: "name: value"))
    var httpHeaders: [String] = []
    @Option(
        name: .customLong(RunOption.httpCA.rawValue),
        help: ArgumentHelp("For https targets behind a private CA: a PEM file of the roots to trust instead of the system's.", valueName: "file"))
    var httpCA: String?
    @Option(help: ArgumentHelp("The {{password}} of a mapping (verifyReceipt's shared secret). Default: $RF_SHARED_SECRET.", valueName: "secret"))
    var sharedSecret: String?
    @OptionGroup var location: VectorsCommand.Location
    @Option(name: .customLong(RunOption.profile.rawValue), help: "How acceptable vectors are judged: strict, apple-compatible or lenient. Default: not judged (ACCEPTABLE).")
    var profile: String?
    @Option(name: .customLong(RunOption.run.rawValue), help: ArgumentHelp("Only vectors whose id matches (repeatable, * wildcard).", valueName: "pattern"))
    var run: [String] = []
    @Option(help: ArgumentHelp("Leave out vectors whose id matches (repeatable).", valueName: "pattern"))
    var skip: [String] = []
    @Option(help: ArgumentHelp("Only shard k of n (by a hash of each id; stable as the corpus grows). Combine shards with `forge run merge`.", valueName: "k/n"))
    var shard: String?
    @Option(help: "Vectors in flight at once (capped by the harness's maxConcurrency).")
    var parallel: Int = ProcessInfo.processInfo.activeProcessorCount
    @Option(
        help: ArgumentHelp(
            "Seconds per vector before TIMEOUT (the harness is restarted), at most \(Int(HarnessLimits.maximumTimeoutSeconds)). For http(s) targets it covers the whole exchange: connect, request, headers and body. A stdio harness has at least \(Int(HarnessLimits.minimumHelloSeconds)) s to start and say hello. Default: \(Int(HarnessLimits.defaultProcessTimeoutSeconds)) for exec/exit, \(Int(HarnessLimits.defaultTimeoutSeconds)) otherwise.",
            valueName: "seconds"))
    var timeout: Double?
    @Option(
        name: .customLong(RunOption.maxErrors.rawValue),
        help: ArgumentHelp(
            "Tolerate this many harness failures (ERROR, TIMEOUT, CRASH); one more stops the run with exit 2. Default: none tolerated, never stop early.", valueName: "n"))
    var maxErrors: Int?
    @Option(
        help: ArgumentHelp(
            "What an exec/exit target's error classes mean: none (default), coarse or fine. Once for every target, or once per --target in order.", valueName: "granularity"))
    var granularity: [HarnessHello.Granularity] = []
    @Option(
        name: .customLong(RunOption.features.rawValue),
        help: ArgumentHelp(
            "Features an exec/exit/mapping target supports (comma-separated; '' for none); vectors needing others are SKIP. Default: \(Feature.allCases.filter(\.creditedByDefault).map(\.rawValue).joined(separator: ", ")); online (OCSP to the responder forge run starts on 127.0.0.1:\(OCSPContext.port)) only when named. `jws` is an alias of --artifacts jws. Once for every target, or once per --target in order.",
            valueName: "list"))
    var features: [String] = []
    @Option(
        name: .customLong(RunOption.artifacts.rawValue),
        help: ArgumentHelp(
            "Which artefacts to judge, for every --target: receipt, jws (StoreKit 2), transaction-receipt (iOS 6) or all. Default: what the harness's hello declares, else receipt (swift:reference declares all). Vectors of the others are not sent and not counted.",
            valueName: "kind"))
    var artifacts: ArtifactsOption?
    @Option(
        help: ArgumentHelp(
            "A name for the target in reports and differential mode (default: the implementation its harness declares). Once per --target, in order.", valueName: "name"))
    var label: [String] = []
    @Flag(help: "Check every message of a protocol harness (exec, stdio, http) against Vectors/schema/harness-v1.schema.json; violations are ERROR.")
    var validateProtocol = false
    @Option(help: ArgumentHelp("Write results.json here.", valueName: "file"))
    var results: String?
    @Option(help: ArgumentHelp("Write JUnit XML here.", valueName: "file"))
    var junit: String?
    @Option(help: ArgumentHelp("Write a Markdown summary here (e.g. $GITHUB_STEP_SUMMARY).", valueName: "file"))
    var markdown: String?
    @Option(help: ArgumentHelp("Write a single-file HTML report here.", valueName: "file"))
    var html: String?
    @Option(
        help: ArgumentHelp(
            "Known failures to tolerate (XFAIL); a vector that now passes (XPASS), fails differently (CHANGED_FAILURE) or an expired entry fails the run.", valueName: "file"))
    var baseline: String?
    @Option(help: ArgumentHelp("Write a baseline tolerating this run's failures, keeping reasons, issues and expiry dates of the file already there.", valueName: "file"))
    var writeBaseline: String?
    @Flag(name: .shortAndLong, help: "No progress line and no summary table; only unexpected outcomes and the counts.")
    var quiet = false

    func validate() throws {
        guard (1...256).contains(parallel) else { throw ValidationError("--parallel must be between 1 and 256") }
        if let timeout {
            guard timeout > 0, timeout <= HarnessLimits.maximumTimeoutSeconds else {
                throw ValidationError("--timeout must be more than 0 and at most \(Int(HarnessLimits.maximumTimeoutSeconds)) seconds")
            }
        }
        if let maxErrors { guard maxErrors >= 0 else { throw ValidationError("--max-errors must be 0 or more") } }
        for list in features {
            let unknown = Self.featureNames(list).filter { Feature(rawValue: $0) == nil && !ArtifactSelection.featureAliases.contains($0) }
            if !unknown.isEmpty {
                throw ValidationError(
                    "--features: unknown feature\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", ")); the corpus knows \(Feature.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
        }
        for (name, count) in [("--granularity", granularity.count), ("--features", features.count)] where count > 1 && count != target.count {
            throw ValidationError("\(name) is given \(count) times for \(target.count) target\(target.count == 1 ? "" : "s"): give it once for all, or once per --target")
        }
        if !label.isEmpty, label.count != target.count {
            throw ValidationError("--label is given \(label.count) times for \(target.count) target\(target.count == 1 ? "" : "s"): give one per --target")
        }
        if Set(label).count != label.count { throw ValidationError("--label names must differ") }
        let targets = try parsedTargets()
        if mapping != nil, !targets.allSatisfy({ $0.kind == .http }) {
            throw ValidationError("--mapping applies to http(s):// targets only")
        }
        if let shard { guard Shard(shard) != nil else { throw ValidationError("--shard must be k/n with 1 ≤ k ≤ n, not '\(shard)'") } }
        if target.count > 1, baseline != nil || writeBaseline != nil {
            throw ValidationError("--baseline and --write-baseline apply to one target; differential mode compares targets instead")
        }
        if let httpCA, !FileManager.default.fileExists(atPath: httpCA) { throw ValidationError("--http-ca: no such file: \(httpCA)") }
        for header in httpHeaders where !header.contains(":") { throw ValidationError("--http-header must look like 'Name: value', not '\(header)'") }
    }

    func run() async throws {
        // Checked here, not in validate(): `forge run merge` shares these options and has no target.
        guard !target.isEmpty else { throw ValidationError("give --target (\(Target.forms))") }
        let targets = try parsedTargets()
        if let remote = targets.first(where: { $0.kind == .http }) { _ = try Network.required(for: "--target \(remote)") }
        // Watched until forge exits, never cancelled: once the reports are being written a signal waits for the run
        // to end as it would have, and giving SIGTERM its default action back before the exit would let a late one
        // kill a run that had written every report (RunnerRobustnessTests, "once 20 harnesses ended").
        _ = Interrupts.stopHarnessesOnSignal()
        let (manifest, directory) = try location.manifest()
        if let profile, manifest.profiles[profile] == nil {
            throw fail("unknown profile '\(profile)'; the corpus defines \(manifest.profiles.keys.sorted().joined(separator: ", "))", Exit.usage)
        }
        let shard = self.shard.flatMap(Shard.init)
        let include: (Vector) -> Bool = { vector in
            (run.isEmpty || run.contains { matches(vector.id.text, $0) }) && !skip.contains { matches(vector.id.text, $0) } && (shard?.contains(vector.id.text) ?? true)
        }
        // Patterns that select nothing are a mistake to say, not a conformant run of nothing (as `forge vectors list`).
        if !run.isEmpty || !skip.isEmpty,
            !manifest.vectors.contains(where: { vector in
                (run.isEmpty || run.contains { matches(vector.id.text, $0) }) && !skip.contains { matches(vector.id.text, $0) }
            })
        {
            let said = (run.map { "--run '\($0)'" } + skip.map { "--skip '\($0)'" }).joined(separator: " ")
            throw fail("no vector of the corpus is selected by \(said) (forge vectors list shows the ids)", Exit.usage)
        }
        // The baseline is read before anything runs: a missing one is found at once, not after the whole corpus.
        let known = try baseline.map { try loadBaseline($0) }
        var shared = TargetPlan(manifest: manifest, vectorsDirectory: directory)
        shared.timeout = timeout
        shared.httpHeaders = httpHeaders.map(TargetPlan.header)
        shared.sharedSecret = sharedSecret ?? ProcessInfo.processInfo.environment["RF_SHARED_SECRET"]
        shared.connections = parallel
        shared.checker = validateProtocol ? try protocolCheck() : nil
        shared.mapping = try mapping.map(TargetPlan.loadMapping)
        shared.httpTrustRoots = httpCA
        var runs: [RunResults] = []
        for (index, uri) in targets.enumerated() {
            var settings = shared
            if let list = Self.perTarget(features, index) { settings.features = Self.featureNames(list) }
            if let value = Self.perTarget(granularity, index) { settings.granularity = value }
            let label = self.label.isEmpty ? nil : self.label[index]
            var runner = ConformanceRunner(
                manifest: manifest, vectorsDirectory: directory, profile: profile, parallelism: parallel, maxErrors: maxErrors, artifacts: artifacts?.groups)
            runner.services = [OnlineResponder.service]
            let progress = ProgressLine(enabled: !quiet && isatty(STDERR_FILENO) == 1, label: target.count > 1 ? label ?? uri.text : nil) {
                StandardStream.error.write($0)
            }
            var outcome: RunResults
            do {
                outcome = try await Network.targetProviders.withValidator(uri, plan: settings) { validator in
                    try await runner.run(validator, selecting: include) { result, done, total in progress.update(result.outcome, done: done, total: total) }
                }
            } catch let error as CorpusError {
                throw fail(error.message, Exit.dataError)
            } catch let error as ConformanceError where error.code == .invalidCommand {
                throw fail(error.message, Exit.usage)
            }
            progress.finish()
            outcome.shard = shard?.description
            outcome.target = uri.text
            outcome.label = label
            outcome.mapping = uri.kind == .http ? mapping : nil
            runs.append(outcome)
        }
        if runs.contains(where: { $0.artifacts?.source == .featureAlias }) { note(ArtifactSelection.aliasNote) }
        try Interrupts.finishing {
            if runs.count == 1 {
                try finishSingle(runs[0], known: known, manifest: manifest)
            } else {
                try finishDifferential(runs, manifest: manifest)
            }
        }
    }

    private func finishSingle(_ result: RunResults, known: Baseline?, manifest: Manifest) throws {
        var outcome = result
        if let known {
            for entry in known.apply(to: &outcome, today: Baseline.today) {
                print("EXPIRED BASELINE ENTRY \(entry.id ?? entry.pattern ?? "?") (expired \(entry.expires ?? "")): triage it again — \(entry.reason)")
            }
        }
        if let writeBaseline {
            let existing = FileManager.default.fileExists(atPath: writeBaseline) ? try loadBaseline(writeBaseline) : known
            try writeOutput(try ReportFiles.encoder.encode(Baseline.written(from: outcome, keeping: existing)), to: writeBaseline)
        }
        try writeReports([outcome], differential: nil, manifest: manifest)
        print(ConsoleReport.outcome(outcome, quiet: quiet), terminator: "")
        let code = outcome.exitCode
        if code != 0 { throw ExitCode(code) }
    }

    private func finishDifferential(_ runs: [RunResults], manifest: Manifest) throws {
        let differential = DifferentialResults(runs: runs)
        try writeReports(runs, differential: differential, manifest: manifest)
        print(ConsoleReport.differential(differential, runs: runs, quiet: quiet), terminator: "")
        let code = differential.exitCode
        if code != 0 { throw ExitCode(code) }
    }

    private func writeReports(_ runs: [RunResults], differential: DifferentialResults?, manifest: Manifest) throws {
        try ReportFiles(results: results, junit: junit, markdown: markdown, html: html).write(runs, differential: differential, manifest: manifest, to: writeOutput)
    }

    private func protocolCheck() throws -> ProtocolViolationCheck {
        let checker: ProtocolChecker
        do { checker = try ProtocolChecker() } catch { throw fail("cannot load the harness protocol schema: \(error)", Exit.software) }
        return ProtocolViolationCheck { message in
            let violations = checker.check(harnessMessage: message)
            return violations.isEmpty ? nil : ProtocolChecker.describe(violations)
        }
    }

    /// A baseline file: missing is 66, as every input file; unreadable or not a baseline, 65.
    private func loadBaseline(_ path: String) throws -> Baseline {
        guard FileManager.default.fileExists(atPath: path) else { throw fail("the baseline \(path) does not exist", Exit.noInput) }
        do { return try Baseline.load(contentsOf: URL(fileURLWithPath: path)) } catch { throw fail(error.message, Exit.dataError) }
    }

    /// A results.json of one target (what merge and matrix read); anything else is bad data (exit 65).
    static func loadResults(_ file: String) throws -> RunResults {
        let data = Data(try readInput(file, kind: .json).bytes)
        do { return try RunResults.read(data) } catch {
            throw fail("\(file) is not a results.json of a single forge run target: \(error.message)", Exit.dataError)
        }
    }

    /// Every `--target`, parsed once; a malformed one is a usage error naming it.
    private func parsedTargets() throws -> [Target] {
        do { return try target.map(Target.init) } catch { throw ValidationError(error.message) }
    }

    /// The value of a per-target option for target `index`: given once, it applies to every target.
    static func perTarget<Value>(_ values: [Value], _ index: Int) -> Value? {
        values.count == 1 ? values[0] : values.indices.contains(index) ? values[index] : nil
    }

    /// `a,b,c` → features; the empty list is ''.
    static func featureNames(_ list: String) -> [String] {
        list.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty && $0 != "''" }
    }
}

/// `--artifacts`: one artefact group, or all of them.
enum ArtifactsOption: String, ExpressibleByArgument, CaseIterable {
    case receipt, jws
    case transactionReceipt = "transaction-receipt"
    case all

    var groups: [ArtifactGroup] {
        switch self {
        case .receipt: [.receipt]
        case .jws: [.jws]
        case .transactionReceipt: [.transactionReceipt]
        case .all: ArtifactGroup.allCases
        }
    }
}
