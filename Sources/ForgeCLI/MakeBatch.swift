import ArgumentParser
import Foundation
import ReceiptForge
import ReceiptModel
import Synchronization
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `forge make --count N --out DIR`: see the BATCH section of `forge make --help`.
extension Make {
    func makeBatch(_ scenario: Scenario, now: Date, count: Int, into directory: String, pki: TestPKI) throws {
        let folder = URL(fileURLWithPath: directory)
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
            throw fail("cannot create \(directory): \(error.localizedDescription)", Exit.cannotCreate)
        }
        let forge: Forge
        do { forge = try Forge(pki: pki) } catch { throw fail(error.message, Exit.software) }
        let format = self.format ?? .der
        let suffix = ["der": "der", "base64": "b64", "json": "json"][format.rawValue] ?? "der"
        let digits = String(count - 1).count
        let index = Mutex([String?](repeating: nil, count: count))
        let done = Atomic(0)
        let showProgress = !quiet && isatty(STDERR_FILENO) == 1
        let started = ContinuousClock.now
        let make = self
        let jobs = self.jobs ?? ProcessInfo.processInfo.activeProcessorCount
        do {
            try ReceiptBatch.make(scenario, now: now, count: count, jobs: jobs, forge: forge, naming: scenarioOptions.spec == nil ? .flags : .specKeys) { number, receipt in
                let name = "receipt-" + String(repeating: "0", count: digits - String(number).count) + String(number) + "." + suffix
                try PlainFile.write(try make.render(receipt, as: format), to: folder.appendingPathComponent(name))
                let line = JSONValue.object([
                    ("file", .string(name)), ("seed", .string(String(receipt.seed))),
                    ("transactionIds", .array(receipt.transactions.map { .string($0.transactionID) })),
                ])
                index.withLock { $0[number] = line.serialized(pretty: false) }
                let finished = done.add(1, ordering: .relaxed).newValue
                if showProgress, finished % 500 == 0 || finished == count {
                    FileHandle.standardError.write(Data("\rforge: \(finished)/\(count) receipts\u{1B}[K".utf8))
                }
            }
        } catch let error as ForgeError {
            throw fail(error.message, error.code == .conflictingOptions || error.code == .invalidScenario ? Exit.usage : Exit.software)
        } catch {
            throw fail("writing into \(directory): \(error.localizedDescription)", Exit.cannotCreate)
        }
        let lines = index.withLock { $0.compactMap { $0 } }.joined(separator: "\n") + "\n"
        try writeOutput(Data(lines.utf8), to: folder.appendingPathComponent("index.jsonl").path)
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if !quiet {
            let rate = Int((Double(count) / max(seconds, 1e-9)).rounded())
            note("made \(count) \((scenario.preset ?? .appstore).rawValue) receipts in \(String(format: "%.2f", seconds)) s (\(rate)/s, \(jobs) jobs) → \(directory)")
            note("now \(ReceiptDate.format(now)), seeds \(ReceiptBatch.seed(of: 0, scenario: scenario, now: now)) + i; index: \(directory)/index.jsonl")
        }
    }
}
