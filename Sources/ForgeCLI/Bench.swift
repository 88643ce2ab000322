import AppStoreVocabulary
import ArgumentParser
import Dispatch
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import StoreForge
import ReceiptModel
import Synchronization
import _ForgeSupport
import JWSModel
import StoreModel

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks: `forge bench make` (the default), `forge bench runner` and `forge bench realtime` (your Retention Messaging endpoint).",
        subcommands: [BenchMake.self, BenchRunner.self, BenchRealtime.self], defaultSubcommand: BenchMake.self)
}

struct BenchMake: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make",
        abstract: "Measure receipts/s for `make` against the raw RSA-2048 sign rate of the same OpenSSL.",
        discussion: """
            Signing is the physical limit of making receipts: the ratio make/sign shows what the forge adds on top of OpenSSL (target ≥ 0.9). Both are measured in this run, single-threaded and with --jobs threads, alternating in --rounds short rounds so that a machine whose speed drifts affects both alike; medians are reported. Use a release build: swift run -c release forge bench.
            """)

    @Option(help: "Threads for the parallel measurement. Default: the number of cores.")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "Seconds per configuration (1 thread, then --jobs), shared by sign and make.")
    var seconds: Double = 6
    @Option(help: "Alternating sign/make rounds per configuration; the median is reported.")
    var rounds: Int = 9
    @Option(help: "Preset of the receipts made.")
    var preset: Preset = .appstore
    @Option(help: ArgumentHelp("Measure JWS of this kind instead (transaction, renewal, …) against raw ES256 signing (RFC 6979, P-256).", valueName: "kind"))
    var jws: JWSKind?
    @Flag(help: "Print the figures as JSON.")
    var json = false

    func validate() throws {
        guard (1...256).contains(jobs) else { throw ValidationError("--jobs must be between 1 and 256") }
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be in (0, 600]") }
        guard (1...1000).contains(rounds) else { throw ValidationError("--rounds must be between 1 and 1000") }
    }

    func run() throws {
        // One forge (and one key) per thread, loaded separately, as a parallel user would: shared
        // objects would make the threads fight over reference counts instead of measuring the work.
        var forges: [Forge] = []
        for _ in 0..<jobs {
            let pki = try loadPKI(nil)
            do { forges.append(try Forge(receiptPKI: pki)) } catch { throw fail(error.message, Exit.software) }
        }
        let signers = forges.map { RawSigner.receipt($0, preset: preset) }
        let now = ReceiptDate.parse("2025-01-01T00:00:00Z")!
        let scenario = Scenario(preset: preset, purchases: [Purchase(productID: "com.example.pro", renewals: 2)])

        var sign: @Sendable (Int, Int) -> Void = { thread, index in signers[thread](index) }
        var make: @Sendable (Int, Int) -> Void = { [forges] thread, index in
            var seeded = scenario
            seeded.seed = UInt64(index)
            _ = try? forges[thread].make(seeded, now: now)
        }
        var labels = (signers.first?.label ?? "", "forge make receipts/s")
        if let jws {
            let leafSigners = forges.map { RawSigner.jws($0, preset: preset) }
            let jwsScenario = Scenario(purchases: [Purchase(productID: "com.example.pro", renewals: 2, period: "P1M")])
            sign = { thread, index in leafSigners[thread](index) }
            make = { [forges] thread, index in
                var seeded = jwsScenario
                seeded.seed = UInt64(index)
                _ = try? forges[thread].make(jws, scenario: seeded, now: now)
            }
            labels = (leafSigners.first?.label ?? "", "forge jws make \(jws.rawValue)/s")
        }
        // Sign and make alternate in short rounds and the median of the per-round figures is kept,
        // so drift in the machine's speed (a shared VM) hits both sides of the ratio alike.
        let single = interleaved(sign, make, threads: 1)
        let parallel = interleaved(sign, make, threads: jobs)
        let signRates = (single.sign, parallel.sign)
        let makeRates = (single.make, parallel.make)
        var rows: [(label: String, single: Double, parallel: Double)] = []
        rows.append((labels.0, signRates.0, signRates.1))
        rows.append((labels.1, makeRates.0, makeRates.1))
        rows.append(("ratio make / sign", single.ratio, parallel.ratio))
        rows.append(("scaling vs 1 thread (make)", 1, makeRates.1 / makeRates.0))
        if json {
            print(
                JSONValue.object([
                    ("preset", .string(preset.rawValue)), ("jobs", .integer(Int64(jobs))), ("seconds", .string(String(seconds))), ("rounds", .integer(Int64(rounds))),
                    ("signPerSecond", .array([.integer(Int64(signRates.0)), .integer(Int64(signRates.1))])),
                    ("makePerSecond", .array([.integer(Int64(makeRates.0)), .integer(Int64(makeRates.1))])),
                    ("ratio", .array([.string(format(single.ratio)), .string(format(parallel.ratio))])),
                    ("scaling", .string(format(makeRates.1 / makeRates.0))),
                ]).serialized())
            return
        }
        print(
            "forge bench — \(jws.map { "JWS \($0.rawValue)" } ?? "preset \(preset.rawValue)"), 1 product with 2 renewals; median of \(rounds) alternating rounds in \(seconds)s per column"
        )
        print("".paddedColumn(34) + "1 thread".leftPad(12) + "\(jobs) jobs".leftPad(12))
        for row in rows {
            let isRatio = row.label.hasPrefix("ratio") || row.label.hasPrefix("scaling")
            let cells = [row.single, row.parallel].map { isRatio ? format($0) : String(Int($0)) }
            print(row.label.paddedColumn(34) + cells[0].leftPad(12) + cells[1].leftPad(12))
        }
    }

    /// Median sign rate, make rate and make/sign ratio over `rounds` alternating rounds.
    private func interleaved(
        _ sign: @escaping @Sendable (Int, Int) -> Void, _ make: @escaping @Sendable (Int, Int) -> Void,
        threads: Int
    ) -> (sign: Double, make: Double, ratio: Double) {
        var signs: [Double] = [], makes: [Double] = [], ratios: [Double] = []
        let slice = seconds / Double(rounds) / 2
        for _ in 0..<rounds {
            let signRate = measure(sign, threads: threads, seconds: slice)
            let makeRate = measure(make, threads: threads, seconds: slice)
            signs.append(signRate)
            makes.append(makeRate)
            ratios.append(makeRate / signRate)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return (median(signs), median(makes), median(ratios))
    }

    /// Operations per second of `body` run by `threads` threads for `seconds`.
    private func measure(_ body: @escaping @Sendable (_ thread: Int, _ iteration: Int) -> Void, threads: Int, seconds: Double) -> Double {
        let total = Mutex(0)
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int64(seconds * 1000)))
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var count = 0
            while clock.now < deadline {
                body(thread, thread * 1_000_000_000 + count)
                count += 1
            }
            total.withLock { $0 += count }
        }
        let elapsed = start.duration(to: clock.now)
        let secondsElapsed = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(total.withLock { $0 }) / secondsElapsed
    }

    private func format(_ value: Double) -> String { printfFormat("%.2f", value) }
}

extension String {
    func leftPad(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
