import ArgumentParser
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import StoreForge
import ReceiptModel
import Synchronization
import _ForgeSupport
import StoreModel
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `forge make --count N --out DIR`: see the BATCH section of `forge make --help`.
extension Make {
    static let indexName = "index.jsonl"

    /// Why a non-empty `directory` is not written into without --force, naming what it holds.
    static func notEmpty(_ directory: URL) -> ForgeError {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
        let shown = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? " and \(names.count - 3) more" : "")
        return ForgeError(
            .wouldOverwrite,
            "refusing to write into \(directory.path): it is not empty (it holds \(shown)); give a new or empty folder, "
                + "or --force to replace it whole (everything in it is deleted); nothing was changed")
    }

    /// --force replaces a folder whole: never one the shell stands in (`--out . --force`, `--out ~ --force` from home).
    static func refuseHoldingCurrentDirectory(_ directory: URL) throws(ForgeError) {
        let target = directory.standardizedFileURL.resolvingSymlinksInPath().path
        let current = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL.resolvingSymlinksInPath().path
        if current == target || current.hasPrefix(target.hasSuffix("/") ? target : target + "/") {
            throw ForgeError(.wouldOverwrite, "--force will not replace \(directory.path): it holds the current directory; nothing was changed")
        }
    }

    func makeBatch(_ scenario: Scenario, now: Date, count: Int, into directory: String, pki: CertificateSet<CertificateRole>) throws {
        let interrupts = Interrupts.discardStagedOnSignal()
        let folder: StagedFolder
        let target = URL(fileURLWithPath: directory)
        do throws(ForgeError) {
            if force { try Self.refuseHoldingCurrentDirectory(target) }
            folder = try interrupts.slot.stage { () throws(ForgeError) in
                // The check of an existing folder is called only when it holds something.
                force
                    ? try StagedFolder(replacingWhole: target)
                    : try StagedFolder(replacing: target) { existing throws(ForgeError) in throw Self.notEmpty(existing) }
            }
        } catch {
            throw fail(error.message, Exit.cannotCreate)
        }
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
                    StandardStream.error.write("\rforge: \(finished)/\(count) receipts\u{1B}[K")
                }
            }
        } catch let error as ForgeError {
            throw scenarioOptions.refused(error, now: now)
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
        if showProgress { StandardStream.error.write("\r\u{1B}[K") }
        if !quiet {
            let rate = Int((Double(count) / max(seconds, 1e-9)).rounded())
            note("made \(count) \((scenario.preset ?? .appstore).rawValue) receipts in \(printfFormat("%.2f", seconds)) s (\(rate)/s, \(jobs) jobs) → \(directory)")
            note("now \(ReceiptDate.format(now)), seeds \(ReceiptBatch.seed(of: 0, scenario: scenario, now: now)) + i; index: \(directory)/index.jsonl")
        }
    }
}
