#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import Synchronization
public import ReceiptCorpus
import _ForgeSupport

/// One vector's result in `results.json`.
public struct VectorResult: Codable, Sendable, Hashable {
    public var id: String
    public var revision: Int
    public var severity: Severity
    public var outcome: Outcome
    /// The verdict the vector demands under the run's profile.
    public var expected: Verdict
    public var expectedErrorClasses: [String]
    /// What the harness said: accept, reject, or nil when it skipped or errored.
    public var verdict: HarnessReply.Verdict?
    public var errorClass: String?
    public var message: String?
    public var durationMicroseconds: Int

    public init(
        id: String, revision: Int, severity: Severity, outcome: Outcome, expected: Verdict, expectedErrorClasses: [String],
        verdict: HarnessReply.Verdict?, errorClass: String?, message: String?, durationMicroseconds: Int
    ) {
        self.id = id
        self.revision = revision
        self.severity = severity
        self.outcome = outcome
        self.expected = expected
        self.expectedErrorClasses = expectedErrorClasses
        self.verdict = verdict
        self.errorClass = errorClass
        self.message = message
        self.durationMicroseconds = durationMicroseconds
    }
}

extension VectorResult {
    /// One line for a console or a test failure: outcome, id, expected against got, and the message
    /// flattened to one line (a harness may say anything, newlines and escape sequences included).
    public func summaryLine(padded: Bool) -> String {
        let outcome = padded ? self.outcome.rawValue.paddedColumn(16) : self.outcome.rawValue
        let classes = expectedErrorClasses.isEmpty ? "" : " [\(expectedErrorClasses.joined(separator: "|"))]"
        let said = message.map { " — " + Self.oneLine($0, limit: 300) } ?? ""
        return
            "\(outcome) \(id): expected \(expected.rawValue)\(classes), got \(verdict?.rawValue ?? "nothing")\(errorClass.map { " " + Self.oneLine($0, limit: 100) } ?? "")\(said)"
    }

    /// Control characters become spaces, runs of blanks one space, and the text is cut at `limit` characters.
    static func oneLine(_ text: String, limit: Int) -> String {
        let flat = String(String.UnicodeScalarView(text.unicodeScalars.map { [.control, .format].contains($0.properties.generalCategory) ? " " : $0 }))
            .split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        return flat.count > limit ? flat.prefix(limit) + "…" : flat
    }
}

/// A whole run: what `results.json` holds and every report is rendered from.
public struct RunResults: Codable, Sendable {
    public var suite: String
    public var implementation: String
    public var profile: String?
    /// Set when the handshake or the canaries failed and the run stopped: what is probably misconfigured.
    public var canaryDiagnosis: String?
    public var counts: [String: Int]
    public var results: [VectorResult]
    public var durationMilliseconds: Int
    /// Baseline entries past their expiry date: they fail the run until triaged again.
    public var expiredBaselineEntries: [String] = []
    /// `k/n` when only one shard of the corpus ran (see `Shard`).
    public var shard: String?
    /// `--max-errors`: harness failures (ERROR, TIMEOUT, CRASH) tolerated before the run counts as broken.
    public var errorBudget: Int?
    /// Why the run stopped before every vector ran (the error budget was exceeded).
    public var stoppedEarly: String?
    /// The `--target` that was judged (`stdio:./harness`, `http://…`), when the CLI ran it.
    public var target: String?
    /// What the harness declared: features, error granularity, clock injection, concurrency.
    public var hello: HarnessHello?
    /// `--label`: the name reports and differential mode give this run instead of the implementation's.
    public var label: String?
    /// Which artefacts were judged and why; vectors of the others are not in `results`. Absent in files written
    /// before artefacts were a selection: those judged every artefact.
    public var artifacts: ArtifactSelection?
    /// The corpus judged: its path and the digest of its manifest.
    public var corpus: JudgedCorpus?
    /// The `--mapping` of an http target (`verifyreceipt` or a file), so a reproduce command can name it.
    public var mapping: String?
    /// Services selected vectors needed that could not start (the OCSP responder of `online` vectors), each with why:
    /// their vectors are SKIP with that reason, and the run is an infrastructure failure.
    public var unavailableServices: [String]?

    /// How reports name this run: its label, or the implementation it declared.
    public var name: String { label ?? implementation }

    /// The run's wall time as people read it ("850 ms", "5.412 s").
    public var durationDescription: String { ReportText.duration(milliseconds: durationMilliseconds) }

    /// 0 conformant, 1 conformance failure (or an expired baseline entry), 2 infrastructure failure:
    /// failed canaries, a run stopped early, more harness failures than the error budget, or vectors it selected
    /// and could not judge (``notJudged``).
    public var exitCode: Int32 {
        let harnessFailures = results.count { $0.outcome.isInfrastructureFailure }
        if canaryDiagnosis != nil || stoppedEarly != nil || notJudged != nil || harnessFailures > (errorBudget ?? 0) { return 2 }
        return results.contains { $0.outcome.isConformanceFailure } || !expiredBaselineEntries.isEmpty ? 1 : 0
    }

    /// Why the run is no verdict on what it selected, or nil: a service its vectors need could not start, or it
    /// judged nothing at all (every vector SKIP). Zero verdicts are no evidence of conformance.
    public var notJudged: String? {
        var reasons = unavailableServices ?? []
        if !results.isEmpty, results.allSatisfy({ $0.outcome == .skip }) {
            let why = Dictionary(grouping: results.compactMap(\.message), by: { $0 }).max { ($0.value.count, $1.key) < ($1.value.count, $0.key) }?.key
            let all = results.count == 1 ? "its one vector is SKIP" : "all \(results.count) vectors are SKIP"
            // A service that did not start is already the reason: not said twice.
            let shown = why.flatMap { reasons.contains($0) ? nil : " (\(VectorResult.oneLine($0, limit: 300)))" } ?? ""
            reasons.append("nothing was judged: \(all)\(shown)")
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// One line per unexpected outcome, for a failing test's message or a log.
    public var failureSummary: String {
        var lines = results.filter { $0.outcome.isConformanceFailure || $0.outcome.isInfrastructureFailure }.map { $0.summaryLine(padded: false) }
        if let canaryDiagnosis { lines.insert("CANARIES FAILED: \(canaryDiagnosis)", at: 0) }
        if let stoppedEarly { lines.append("STOPPED: \(stoppedEarly)") }
        if let notJudged { lines.append("NOT JUDGED: \(notJudged)") }
        lines += expiredBaselineEntries.map { "EXPIRED BASELINE ENTRY \($0)" }
        return lines.joined(separator: "\n")
    }

    static func counting(_ results: [VectorResult]) -> [String: Int] {
        Dictionary(grouping: results, by: \.outcome.rawValue).mapValues(\.count)
    }
}

/// Runs a corpus against a validator: canaries first (a validator that rejects them stops the run
/// with a diagnosis, so a misconfigured trust anchor cannot "pass" every negative vector), then the
/// rest with bounded concurrency. Outcomes are decided here, from the manifest, never by the harness.
public struct ConformanceRunner: Sendable {
    public let manifest: Manifest
    public let vectorsDirectory: URL
    public var profileName: String?
    public var parallelism: Int
    /// Harness failures tolerated; one more stops the run (the rest is SKIP) with exit 2. nil: never stop.
    public var maxErrors: Int?
    /// `--artifacts`: the artefacts to judge whatever the harness declares; nil lets it declare (``ArtifactSelection``).
    public var artifacts: [ArtifactGroup]?
    /// What features need besides the harness (the OCSP responder of `online` vectors): each is started after the
    /// hello when the harness declares its feature and a selected vector needs it, and stopped when the run ends.
    public var services: [FeatureService] = []

    public init(
        manifest: Manifest, vectorsDirectory: URL, profile: String? = nil, parallelism: Int = 4, maxErrors: Int? = nil, artifacts: [ArtifactGroup]? = nil
    ) {
        self.manifest = manifest
        self.vectorsDirectory = vectorsDirectory
        self.profileName = profile
        self.parallelism = parallelism
        self.maxErrors = maxErrors
        self.artifacts = artifacts
    }

    /// The one call for a Swift test: the whole corpus (found as `CorpusLocation` does: `vectors`,
    /// `$RECEIPT_FORGE_VECTORS`, `./Vectors`, or this package's own) against `validator`, with the known
    /// failures of `baseline` (a file path) tolerated as the CLI's `--baseline` does.
    ///
    /// ```swift
    /// @Test func conformance() async throws {
    ///     let results = try await ConformanceRunner.check(MyValidatorHarness(), profile: "apple-compatible")
    ///     #expect(results.exitCode == 0, "\(results.failureSummary)")
    /// }
    /// ```
    public static func check(
        _ validator: some ReceiptValidator, vectors: String? = nil, profile: String? = nil, baseline: String? = nil,
        parallelism: Int = ProcessInfo.processInfo.activeProcessorCount, artifacts: [ArtifactGroup]? = nil
    ) async throws -> RunResults {
        let (manifest, directory) = try corpus(vectors, profile: profile)
        return try await checked(
            validator, manifest: manifest, directory: directory, profile: profile, baseline: baseline, parallelism: parallelism, artifacts: artifacts)
    }

    /// The same for a target named as `forge run --target` names it (`stdio:python3 harness.py`,
    /// `http://127.0.0.1:8080`, `swift:reference`), built by the first of `providers` that serves it
    /// (``ProcessTargets`` is always added) and released after the run. `configure` adjusts the plan
    /// (timeout, mapping, headers) before the target is built.
    ///
    /// ```swift
    /// let results = try await ConformanceRunner.check(target: "stdio:python3 harness.py", profile: "strict")
    /// let viaHTTP = try await ConformanceRunner.check(target: "http://127.0.0.1:8080", providers: [HTTPTargets()])
    /// ```
    public static func check(
        target: String, providers: [any TargetProvider] = [], vectors: String? = nil, profile: String? = nil, baseline: String? = nil,
        parallelism: Int = ProcessInfo.processInfo.activeProcessorCount, artifacts: [ArtifactGroup]? = nil,
        configure: (inout TargetPlan) -> Void = { _ in }
    ) async throws -> RunResults {
        let parsed = try Target(target)
        let (manifest, directory) = try corpus(vectors, profile: profile)
        var plan = TargetPlan(manifest: manifest, vectorsDirectory: directory)
        plan.connections = parallelism
        configure(&plan)
        var results = try await (providers + [ProcessTargets()]).withValidator(parsed, plan: plan) { validator in
            try await checked(
                validator, manifest: manifest, directory: directory, profile: profile, baseline: baseline, parallelism: parallelism, artifacts: artifacts)
        }
        results.target = parsed.text
        return results
    }

    private static func corpus(_ vectors: String?, profile: String?) throws -> (Manifest, URL) {
        let location = try CorpusLocation.resolve(
            explicit: vectors, environment: ProcessInfo.processInfo.environment,
            currentDirectory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        let manifest = try ManifestIO.load(from: location.vectors)
        if let profile, manifest.profiles[profile] == nil {
            throw CorpusError(.invalidManifest, "unknown profile '\(profile)'; the corpus defines \(manifest.profiles.keys.sorted().joined(separator: ", "))")
        }
        return (manifest, location.vectors)
    }

    private static func checked(
        _ validator: some ReceiptValidator, manifest: Manifest, directory: URL, profile: String?, baseline: String?, parallelism: Int,
        artifacts: [ArtifactGroup]?
    ) async throws -> RunResults {
        let known = try baseline.map { path throws(ConformanceError) in try Baseline.load(contentsOf: URL(fileURLWithPath: path)) }
        var results = try await ConformanceRunner(
            manifest: manifest, vectorsDirectory: directory, profile: profile, parallelism: parallelism, artifacts: artifacts
        )
        .run(validator)
        _ = known?.apply(to: &results, today: Baseline.today)
        return results
    }

    /// Runs the selected vectors; `progress` sees each result as it arrives, with the count done and the total.
    public func run(
        _ validator: some ReceiptValidator, selecting include: (Vector) -> Bool = { _ in true },
        progress: (VectorResult, _ done: Int, _ total: Int) -> Void = { _, _, _ in }
    ) async throws(CorpusError) -> RunResults {
        let clock = ContinuousClock()
        let start = clock.now
        let chosen = manifest.vectors.filter(include)
        let judged = judgedCorpus()
        var hello: HarnessHello
        do {
            hello = try await validator.hello()
        } catch {
            // Nothing vanishes from a report: with no harness to ask, every selected vector is listed as not run.
            let selection = selecting(chosen, hello: nil)
            let classifier = Classifier(profile: profileName.flatMap { manifest.profiles[$0] }, granularity: .none, decodes: false)
            let results = chosen.filter(selection.includes).map { Self.notRun($0, classifier, "not run: the harness handshake failed") }
                .sorted { $0.id < $1.id }
            var outcome = RunResults(
                suite: manifest.suite.version, implementation: "unknown", profile: profileName,
                canaryDiagnosis: "the harness handshake failed: \(error)", counts: RunResults.counting(results), results: results,
                durationMilliseconds: 0)
            (outcome.artifacts, outcome.corpus) = (selection, judged)
            return outcome
        }
        hello.implementation = HarnessLimits.recorded(hello.implementation)
        // Only the selected artefacts are sent, scored and counted; their canaries are the ones that run first.
        let selection = selecting(chosen, hello: hello)
        let selected = chosen.filter(selection.includes)
        let classifier = Classifier(
            profile: profileName.flatMap { manifest.profiles[$0] }, granularity: hello.errorGranularity,
            decodes: hello.features.contains("decode"))
        let canaries = selected.filter(\.canary)
        // Services first: a feature whose service cannot start has its vectors SKIP, with the reason.
        var unavailable: [String: String] = [:]
        var running: [FeatureService.Running] = []
        for service in services
        where hello.features.contains(service.feature.rawValue) && selected.contains(where: { $0.features.contains(service.feature.rawValue) }) {
            do { running.append(try await service.start()) } catch {
                unavailable[service.feature.rawValue] = "\(service.name) could not start: \(error)"
            }
        }
        var budget = Budget(remaining: maxErrors)
        var done = 0
        let report: (VectorResult) -> Void = { result in
            done += 1
            progress(result, done, selected.count)
        }
        var results: [VectorResult] = []
        var diagnosis: String?
        do throws(CorpusError) {
            results = try await execute(canaries, validator, hello, classifier, unavailable, startingSeq: 0, budget: &budget, report: report)
            if results.contains(where: { $0.outcome != .pass && $0.outcome != .skip }) {
                let passed = Set(results.filter { $0.outcome == .pass }.map(\.id))
                diagnosis = Self.diagnose(
                    results.filter { $0.outcome != .pass && $0.outcome != .skip }, canaries: canaries, accepted: passed,
                    hello: hello)
                // Nothing vanishes from a report: vectors not run are listed as skipped, with the reason.
                results += selected.filter { !$0.canary }.map { Self.notRun($0, classifier, "not run: the canaries failed") }
            } else {
                results += try await execute(
                    selected.filter { !$0.canary }, validator, hello, classifier, unavailable, startingSeq: canaries.count,
                    budget: &budget, report: report)
            }
        } catch {
            for service in running { await service.stop() }
            throw error
        }
        for service in running { await service.stop() }
        results.sort { $0.id < $1.id }
        let unstarted = unavailable.keys.sorted().compactMap { unavailable[$0] }
        let elapsed = start.duration(to: clock.now)
        var outcome = RunResults(
            suite: manifest.suite.version, implementation: hello.implementation, profile: profileName, canaryDiagnosis: diagnosis,
            counts: RunResults.counting(results), results: results,
            durationMilliseconds: Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000))
        outcome.errorBudget = maxErrors
        outcome.hello = hello
        outcome.unavailableServices = unstarted.isEmpty ? nil : unstarted
        (outcome.artifacts, outcome.corpus) = (selection, judged)
        if budget.exhausted, let maxErrors {
            outcome.stoppedEarly = "more than \(maxErrors) harness failure\(maxErrors == 1 ? "" : "s") (\(RunOption.maxErrors)); the vectors not run are SKIP"
        }
        return outcome
    }

    /// The artefacts judged among `chosen` (the vectors --run, --skip and --shard selected), counting those left out.
    private func selecting(_ chosen: [Vector], hello: HarnessHello?) -> ArtifactSelection {
        var selection = ArtifactSelection.resolve(option: artifacts, hello: hello)
        selection.excluded = chosen.count { !selection.includes($0) }
        return selection
    }

    /// Where the corpus is and the digest of its manifest (nil digest parts when it cannot be read again).
    private func judgedCorpus() -> JudgedCorpus? {
        let directory = vectorsDirectory.standardizedFileURL
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(ManifestIO.fileName)) else { return nil }
        let digest = Self.lastManifest.withLock { last -> String in
            if let last, last.data == data { return last.digest }
            let digest = CorpusDigest.sha256Hex(data)
            last = (data, digest)
            return digest
        }
        return JudgedCorpus(path: directory.path, manifestSHA256: digest)
    }

    /// The manifest hashed last and its digest: `forge bench runner` and watch loops judge the same corpus over
    /// and over, and hashing it was a twentieth of a pass. Compared byte for byte, so an edited manifest is hashed.
    private static let lastManifest = Mutex<(data: Data, digest: String)?>(nil)

    /// The first vector file a task could not read, shared by the tasks of a run.
    private final class FirstUnreadable: Sendable {
        private let first = Mutex<String?>(nil)
        func note(_ path: String) { first.withLock { $0 = $0 ?? path } }
        var path: String? { first.withLock { $0 } }
    }

    /// Harness failures left before the run stops.
    struct Budget {
        var remaining: Int?
        var exhausted = false

        mutating func charge(_ outcome: Outcome) {
            guard outcome.isInfrastructureFailure, let left = remaining else { return }
            if left == 0 { exhausted = true } else { remaining = left - 1 }
        }
    }

    static func notRun(_ vector: Vector, _ classifier: Classifier, _ reason: String) -> VectorResult {
        VectorResult(
            id: vector.id.text, revision: vector.revision, severity: vector.severity, outcome: .skip, expected: classifier.expectedVerdict(vector),
            expectedErrorClasses: vector.expected.errorClasses.map(\.rawValue), verdict: nil, errorClass: nil, message: reason, durationMicroseconds: 0)
    }

    private func execute(
        _ vectors: [Vector], _ validator: some ReceiptValidator, _ hello: HarnessHello, _ classifier: Classifier, _ unavailable: [String: String],
        startingSeq: Int, budget: inout Budget, report: (VectorResult) -> Void
    ) async throws(CorpusError) -> [VectorResult] {
        // Each vector is read and encoded by its own task, so the cores share that work too (a corpus's largest
        // vectors are megabytes); that every file is there is checked first, so a broken corpus stops the run
        // before anything is judged.
        let direct = validator.readsBytes
        var planned: [(vector: Vector, seq: Int, file: URL?)] = []
        for (offset, vector) in vectors.enumerated() {
            if Self.skipReason(vector, hello, unavailable: unavailable) != nil {
                planned.append((vector, startingSeq + offset, nil))  // reported as SKIP, never silently dropped
                continue
            }
            let url = vectorsDirectory.appendingPathComponent(vector.file)
            guard FileManager.default.isReadableFile(atPath: url.path) else { throw CorpusError(.notFound, "cannot read vector file \(url.path)") }
            planned.append((vector, startingSeq + offset, url))
        }
        let limit = max(1, min(parallelism, hello.maxConcurrency))
        let unreadable = FirstUnreadable()
        let results = await withTaskGroup(of: VectorResult.self) { group in
            var results: [VectorResult] = []
            var next = 0
            func submit() {
                guard next < planned.count, !budget.exhausted else { return }
                let (vector, seq, file) = planned[next]
                next += 1
                group.addTask {
                    let expected = classifier.expectedVerdict(vector)
                    guard let file else {
                        return VectorResult(
                            id: vector.id.text, revision: vector.revision, severity: vector.severity, outcome: .skip, expected: expected,
                            expectedErrorClasses: vector.expected.errorClasses.map(\.rawValue), verdict: nil, errorClass: nil,
                            message: Self.skipReason(vector, hello, unavailable: unavailable), durationMicroseconds: 0)
                    }
                    guard let bytes = FileBytes.read(file.path) else {
                        unreadable.note(file.path)
                        return Self.notRun(vector, classifier, "not run: cannot read vector file \(file.path)")
                    }
                    var request = ValidateRequest(seq: seq, id: vector.id.text, base64: direct ? "" : Base64.encode(bytes), context: vector.context)
                    if direct { request.bytes = bytes }
                    let clock = ContinuousClock()
                    let began = clock.now
                    let reply = await validator.validate(request)
                    let took = began.duration(to: clock.now)
                    var verdict: HarnessReply.Verdict?, errorClass: String?, message: String?
                    switch reply {
                    case .result(_, let said, let reason, let text, _): (verdict, errorClass, message) = (said, reason, text)
                    case .skipped(_, let reason): message = reason
                    case .errored(_, let text), .failed(_, _, let text): message = text
                    }
                    let outcome = reply.seq == request.seq ? classifier.classify(vector, reply) : .error
                    // Judged on the whole reply; recorded bounded, so a report grows with the vectors, not the harness's words.
                    return VectorResult(
                        id: vector.id.text, revision: vector.revision, severity: vector.severity, outcome: outcome, expected: expected,
                        expectedErrorClasses: vector.expected.errorClasses.map(\.rawValue), verdict: verdict, errorClass: errorClass.map(HarnessLimits.recorded),
                        message: reply.seq == request.seq ? message.map(HarnessLimits.recorded) : "reply seq \(reply.seq) does not answer request \(request.seq)",
                        durationMicroseconds: Int(took.components.seconds * 1_000_000 + took.components.attoseconds / 1_000_000_000_000))
                }
            }
            for _ in 0..<limit { submit() }
            for await result in group {
                results.append(result)
                report(result)
                budget.charge(result.outcome)
                submit()
            }
            // Nothing vanishes: vectors left when the error budget ran out are listed as not run.
            results += planned[next...].map { Self.notRun($0.vector, classifier, "not run: the run stopped after too many harness failures (\(RunOption.maxErrors))") }
            return results
        }
        // A file that vanished after the check: the corpus changed under the run, which is not a verdict.
        if let path = unreadable.path { throw CorpusError(.notFound, "cannot read vector file \(path)") }
        return results
    }

    /// Why the harness cannot judge `vector` as it declared itself in `hello`, or nil if it can.
    static func skipReason(_ vector: Vector, _ hello: HarnessHello, unavailable: [String: String] = [:]) -> String? {
        let group = vector.context.artifactKind.group
        if let declared = hello.artifacts, !declared.isEmpty, !declared.contains(group) {
            return "artifact not declared by the harness: \(group.rawValue) (it declares \(declared.map(\.rawValue).joined(separator: ", ")))"
        }
        let missing = vector.features.filter { !hello.features.contains($0) }
        if !missing.isEmpty { return "feature not declared by the harness: \(missing.joined(separator: ", "))" }
        if let reason = vector.features.lazy.compactMap({ unavailable[$0] }).first { return reason }
        if !hello.clockInjection, dependsOnClock(vector) {
            return "the verdict depends on context.now and the harness cannot set its clock (clockInjection: false)"
        }
        return nil
    }

    /// Whether a vector's verdict changes with the time it is judged at: the `time::` family, and vectors
    /// expected to fail for an expiry or a validity window. Every vector pins `context.now`; a harness on
    /// the wall clock would judge these at another time, so they are skipped rather than scored.
    public static func dependsOnClock(_ vector: Vector) -> Bool {
        vector.id.family == "time"
            || vector.expected.errorClasses.contains { [ErrorClass.chainExpired, .chainNotYetValid, .policyExpired].contains($0) }
    }

    /// What failing canaries most likely mean. `canaries` are the run's canary vectors, `accepted` the ids
    /// of those the harness passed and `hello` what it declared, so a rejection that follows a feature can
    /// be named as such.
    static func diagnose(_ failures: [VectorResult], canaries: [Vector] = [], accepted: Set<String> = [], hello: HarnessHello? = nil) -> String {
        let summary =
            "\(failures.count) canar\(failures.count == 1 ? "y" : "ies") failed (\(failures.map { "\($0.id): \($0.outcome.rawValue)\($0.errorClass.map { " \($0)" } ?? "")" }.joined(separator: "; ")))"
        let hint: String
        if let broken = failures.first(where: \.outcome.isInfrastructureFailure) {
            // The harness itself failed: say how, in its own words, rather than guess at its configuration.
            let what =
                switch broken.outcome {
                case .timeout: "the harness did not answer in time"
                case .crash: "the harness crashed or exited"
                default: "the harness failed"
                }
            hint = "\(what): \(broken.message.map { String($0.prefix(300)) } ?? "no message")."
        } else if let missing = featureHint(failures, canaries: canaries, accepted: accepted, hello: hello) {
            hint = missing
        } else if failures.allSatisfy({ $0.outcome == .wrongDecode }) {
            hint = "the harness accepts the canaries but reports other decoded fields than they hold: is it reading the right attributes?"
        } else {
            let classes = Set(failures.compactMap { $0.errorClass.map { ErrorClass(rawValue: $0).family } })
            hint =
                switch classes.count == 1 ? classes.first : nil {
                case "chain": "is the test root (Vectors/anchors/forge-root.der, or forge-storekit.der for Xcode vectors) configured as the trust anchor?"
                case "binding": "does the harness take the expected bundle id, version and device id from each vector's context?"
                case "policy": "does the harness judge at context.now instead of the wall clock?"
                case "signature", "container", "input": "does the harness decode input.data from base64 before validating?"
                default: "the validator rejects genuine-shaped receipts, so its rejections of broken ones would mean nothing."
                }
        }
        return "\(summary) — \(hint) The run stopped before scoring negative vectors."
    }

    /// When every failed canary was rejected and they all need a feature that no passing canary needs
    /// (an Xcode receipt given to a validator that never accepts Xcode), the feature is the likely cause.
    static func featureHint(_ failures: [VectorResult], canaries: [Vector], accepted: Set<String>, hello: HarnessHello?) -> String? {
        // Only a contrast says something: with no canary accepted, nothing sets the rejected ones apart.
        guard !failures.isEmpty, failures.allSatisfy({ $0.outcome == .falseReject }), canaries.contains(where: { accepted.contains($0.id.text) }) else { return nil }
        let features = Dictionary(canaries.map { ($0.id.text, Set($0.features)) }, uniquingKeysWith: { first, _ in first })
        let passedFeatures = canaries.filter { accepted.contains($0.id.text) }.reduce(into: Set<String>()) { $0.formUnion($1.features) }
        guard let shared = failures.map({ features[$0.id] ?? [] }).reduce(nil, { (common: Set<String>?, next) in common.map { $0.intersection(next) } ?? next })
        else { return nil }
        let suspects = shared.subtracting(passedFeatures).sorted()
        guard !suspects.isEmpty else { return nil }
        let names = suspects.map { "`\($0)`" }.joined(separator: ", ")
        var hint =
            "every rejected canary needs \(names), which no accepted canary needs: if the validator does not support \(suspects.count == 1 ? "it" : "them"), declare features without \(names)"
        if let hello {
            let rest = hello.features.filter { !suspects.contains($0) }.sorted()
            hint += " (exec/exit/mapping targets: \(RunOption.features) \(rest.isEmpty ? "''" : rest.joined(separator: ",")); protocol harnesses: in their hello)"
        }
        if suspects.contains("xcode") {
            hint += "; if it does, is Vectors/anchors/forge-storekit.der its trust anchor for Xcode vectors (context.trustAnchor forge-storekit)?"
        } else {
            hint += "."
        }
        return hint
    }
}
