#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
import ReceiptConformance
import ReceiptModel
import _ForgeSupport
import StoreModel

/// `forge validate --harness`: the reference validator behind the stdio transport (harness protocol v1, one
/// JSON message per line), as `HarnessServer` is behind the HTTP one. A line that is not a protocol message
/// is reported to `note` and skipped, so a stray line from a wrapper script does not end the run.
package enum StdioHarnessServer {
    /// Answers `hello` and `validate` until `stop` or the end of input.
    package static func serve(
        _ harness: ReferenceHarness, readLine: () -> String? = { Swift.readLine() }, write: (Data) -> Void, note: (String) -> Void
    ) {
        let encoder = JSONEncoder()
        func send(_ value: some Encodable) {
            guard let data = try? encoder.encode(value) else { return }
            write(data + [0x0A])
        }
        let decoder = JSONDecoder()
        while let line = readLine() {
            // Nearly every line is a validate request: decoded once, directly.
            if let request = try? decoder.decode(ValidateRequest.self, from: Data(line.utf8)), request.type == HarnessProtocol.MessageType.validate.rawValue {
                send(harness.reply(to: request))
                continue
            }
            guard let message = try? JSONValue(parsing: Data(line.utf8)), let type = message["type"]?.stringValue else {
                note("ignoring a line that is not a protocol message: \(line.prefix(80))")
                continue
            }
            switch HarnessProtocol.MessageType(rawValue: type) {
            case .hello:
                send(harness.helloMessage())
            case .validate:
                guard let request = try? JSONDecoder().decode(ValidateRequest.self, from: Data(line.utf8)) else {
                    let seq = message["seq"]?.integerValue.flatMap { Int(exactly: $0) } ?? -1
                    send(HarnessReply.errored(seq: seq, message: "malformed validate message"))
                    continue
                }
                send(harness.reply(to: request))
            case .stop:
                return
            case .result, .errored, nil:
                note("ignoring message type '\(type)'")
            }
        }
    }
}
