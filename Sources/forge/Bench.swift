import ArgumentParser
import Dispatch
import Foundation
import ForgeCrypto
import ReceiptForge
import ReceiptModel
import Synchronization

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure receipts/s for `make` against the raw RSA-2048 sign rate of the same OpenSSL.",
        discussion: """
        Signing is the physical limit of making receipts: the ratio make/sign shows what the forge adds
        on top of OpenSSL (target ≥ 0.9). Both are measured in this run, single-threaded and with --jobs
        threads, each for --seconds. Use a release build: swift run -c release forge bench.
        """)

    @Option(help: "Threads for the parallel measurement. Default: the number of cores.")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "Seconds per measurement.")
    var seconds: Double = 2
    @Option(help: "Preset of the receipts made.")
    var preset: Preset = .appstore
    @Flag(help: "Print the figures as JSON.")
    var json = false

    func validate() throws {
        guard (1...256).contains(jobs) else { throw ValidationError("--jobs must be between 1 and 256") }
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be in (0, 600]") }
    }

    func run() throws {
        let pki = try loadPKI(nil)
        let forge: Forge
        do { forge = try Forge(pki: pki) } catch { throw fail(error.message, Exit.software) }
        let key = pki[preset.chain[0]].privateKey
        let digest = [UInt8](repeating: 0xA5, count: preset.digest.digestLength)
        let algorithm = preset.digest
        let now = ReceiptDate.parse("2025-01-01T00:00:00Z")!
        let scenario = Scenario(preset: preset, purchases: [Purchase(productID: "com.example.pro", renewals: 2)])

        let sign: @Sendable (Int) -> Void = { _ in _ = try? key.signature(forDigest: digest, algorithm: algorithm) }
        let make: @Sendable (Int) -> Void = { index in
            var seeded = scenario
            seeded.seed = UInt64(index)
            _ = try? forge.make(seeded, now: now)
        }
        var rows: [(label: String, single: Double, parallel: Double)] = []
        let signRates = (measure(sign, threads: 1), measure(sign, threads: jobs))
        let makeRates = (measure(make, threads: 1), measure(make, threads: jobs))
        rows.append(("raw RSA-2048 sign/s (\(algorithm.rawValue))", signRates.0, signRates.1))
        rows.append(("forge make receipts/s", makeRates.0, makeRates.1))
        rows.append(("ratio make / sign", makeRates.0 / signRates.0, makeRates.1 / signRates.1))
        rows.append(("scaling vs 1 thread (make)", 1, makeRates.1 / makeRates.0))
        if json {
            print(JSONValue.object([
                ("preset", .string(preset.rawValue)), ("jobs", .integer(Int64(jobs))), ("seconds", .string(String(seconds))),
                ("signPerSecond", .array([.integer(Int64(signRates.0)), .integer(Int64(signRates.1))])),
                ("makePerSecond", .array([.integer(Int64(makeRates.0)), .integer(Int64(makeRates.1))])),
                ("ratio", .array([.string(format(makeRates.0 / signRates.0)), .string(format(makeRates.1 / signRates.1))])),
                ("scaling", .string(format(makeRates.1 / makeRates.0))),
            ]).serialized())
            return
        }
        print("forge bench — preset \(preset.rawValue), 1 product with 2 renewals, \(seconds)s per figure")
        print("".padding(toLength: 34, withPad: " ", startingAt: 0) + "1 thread".leftPad(12) + "\(jobs) jobs".leftPad(12))
        for row in rows {
            let isRatio = row.label.hasPrefix("ratio") || row.label.hasPrefix("scaling")
            let cells = [row.single, row.parallel].map { isRatio ? format($0) : String(Int($0)) }
            print(row.label.padding(toLength: 34, withPad: " ", startingAt: 0) + cells[0].leftPad(12) + cells[1].leftPad(12))
        }
    }

    /// Operations per second of `body` run by `threads` threads for `seconds`.
    private func measure(_ body: @escaping @Sendable (Int) -> Void, threads: Int) -> Double {
        let total = Mutex(0)
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int64(seconds * 1000)))
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var count = 0
            while clock.now < deadline {
                body(thread * 1_000_000_000 + count)
                count += 1
            }
            total.withLock { $0 += count }
        }
        let elapsed = start.duration(to: clock.now)
        let secondsElapsed = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(total.withLock { $0 }) / secondsElapsed
    }

    private func format(_ value: Double) -> String { String(format: "%.2f", value) }
}

extension String {
    func leftPad(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
