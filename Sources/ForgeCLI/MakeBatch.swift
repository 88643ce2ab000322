import ArgumentParser
import Foundation
import ReceiptForge
import ReceiptModel
import Synchronization
import ForgeSupport
import StoreModel
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `forge make --count N --out DIR`: see the BATCH section of `forge make --help`.
extension Make {
    static let indexName = "index.jsonl"

    /// The files an earlier batch wrote into `directory`: its index and the receipts the index lists.
    static func batchFiles(in directory: URL) -> Set<String> {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(indexName), options: .alwaysMapped) else { return [] }
        var files: Set<String> = [indexName]
        for line in data.split(separator: UInt8(ascii: "\n")) {
            if let file = (try? JSONValue(parsing: line))?.objectValue?["file"]?.stringValue, !file.contains("/") { files.insert(file) }
        }
        return files
    }

    func makeBatch(_ scenario: Scenario, now: Date, count: Int, into directory: String, pki: CertificateSet<CertificateRole>) throws {
        let interrupts = Interrupts.discardStagedOnSignal()
        let folder: StagedFolder
        do { folder = try StagedFolder(replacing: URL(fileURLWithPath: directory), owned: Self.batchFiles) } catch {
            throw fail(error.message, Exit.cannotCreate)
        }
        interrupts.guarding(folder)
        defer { folder.discard() }
        let forge: Forge
        do { forge = try Forge(receiptPKI: pki) } catch { throw fail(error.message, Exit.software) }
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
            try ReceiptBatch.make(scenario, now: now, count: count, jobs: jobs, forge: forge) { number, receipt in
                let name = "receipt-" + String(repeating: "0", count: digits - String(number).count) + String(number) + "." + suffix
                try folder.write(try make.render(receipt, as: format), to: name)
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
            throw fail(scenarioOptions.spec == nil ? ScenarioFlags.message(error) : error.message, Exit.code(for: error))
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail("writing into \(directory): \(error)", Exit.software)
        }
        let lines = index.withLock { $0.compactMap { $0 } }.joined(separator: "\n") + "\n"
        do {
            try folder.write(Data(lines.utf8), to: Self.indexName)
            if let left = try folder.commit() { note("files appeared in the old \(directory) while the batch ran; they are in \(left.path)") }
        } catch { throw fail(error.message, Exit.cannotCreate) }
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
