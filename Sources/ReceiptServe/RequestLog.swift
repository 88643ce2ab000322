public import Foundation
public import ReceiptModel
import Synchronization

/// Every request `forge serve` answered, as JSON Lines, for users' tests to assert on: in memory (the
/// control route `GET /_forge/log`) and, with `--log FILE`, appended to a file line by line as it happens.
///
/// One line: `{"seq", "time", "endpoint", "method", "path", "httpStatus", "status", "fault", "bytes",
/// "password", "excludeOldTransactions", "receipt", "bundleId", "history"}` — `status` is the JSON status
/// sent (null when the answer was not JSON), `fault` the fault applied (null when none), `receipt` the
/// first 16 hex digits of the receipt's SHA-256, `password` `absent`, `present`, `matches` or `mismatch`
/// (never the secret itself).
public final class RequestLog: Sendable {
    private struct State {
        var lines: [String] = []
        var next = 1
    }
    private let state = Mutex(State())
    private let file: FileHandle?

    public init(file: URL?) throws(ServeError) {
        guard let file else {
            self.file = nil
            return
        }
        if !FileManager.default.fileExists(atPath: file.path), !FileManager.default.createFile(atPath: file.path, contents: nil) {
            throw ServeError(.logFailed, "cannot create the request log \(file.path)")
        }
        do {
            let handle = try FileHandle(forWritingTo: file)
            try handle.seekToEnd()
            self.file = handle
        } catch {
            throw ServeError(.logFailed, "cannot open the request log \(file.path): \(error.localizedDescription)")
        }
    }

    /// Adds one entry, numbered and timed here.
    public func record(_ entry: JSONObject, at time: Date = Date()) {
        state.withLock { state in
            var line: JSONObject = [("seq", .integer(Int64(state.next))), ("time", .string(ReceiptDate.format(time, style: .fractionalZulu)))]
            line += entry
            state.next += 1
            let text = JSONValue.object(line).serialized(pretty: false)
            state.lines.append(text)
            // Under the lock, so the file's lines are in `seq` order.
            try? file?.write(contentsOf: Data((text + "\n").utf8))
        }
    }

    /// The entries so far, one JSON object per line.
    public var jsonLines: String { state.withLock { $0.lines.map { $0 + "\n" }.joined() } }

    public func clear() { state.withLock { $0.lines.removeAll() } }
}
