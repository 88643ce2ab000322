public import Foundation
public import ForgeCrypto
public import ReceiptConformance
import ReceiptCorpus
import ReceiptModel

/// The reference validator behind the harness protocol: the `swift:reference` target of `forge run`,
/// and the model for wiring a Swift validator to `ConformanceRunner`.
public struct ReferenceHarness: ReceiptValidator {
    /// Trust anchor id (as vectors name them) → certificate.
    public let anchors: [String: X509Certificate]

    public init(anchors: [String: X509Certificate]) { self.anchors = anchors }

    /// Loads the trust anchors a corpus names.
    public init(vectorsDirectory: URL) throws {
        let manifest = try ManifestIO.load(from: vectorsDirectory)
        var anchors: [String: X509Certificate] = [:]
        for (id, anchor) in manifest.trustAnchors {
            anchors[id] = try X509Certificate(derEncoded: [UInt8](Data(contentsOf: vectorsDirectory.appendingPathComponent(anchor.file))))
        }
        self.anchors = anchors
    }

    public func hello() async -> HarnessHello {
        HarnessHello(implementation: "receipt-forge reference validator", features: ["device-hash", "xcode", "sha1", "robustness", "large"],
                     errorGranularity: .fine, clockInjection: true, maxConcurrency: ProcessInfo.processInfo.activeProcessorCount)
    }

    public func validate(_ request: ValidateRequest) async -> HarnessReply {
        guard let bytes = Data(base64Encoded: request.input.data) else { return .errored(seq: request.seq, message: "input.data is not base64") }
        guard let now = ReceiptDate.parse(request.context.now) else { return .errored(seq: request.seq, message: "context.now is not a date") }
        let context = ValidationContext(trustedRoots: anchors[request.context.trustAnchor].map { [$0] } ?? [], bundleID: request.context.bundleId,
                                        appVersion: request.context.appVersion, deviceID: request.context.deviceId.flatMap(DeviceID.init)?.bytes,
                                        environment: request.context.environment, now: now)
        let report = ReferenceValidator().validate([UInt8](bytes), context: context)
        return .result(seq: request.seq, verdict: report.verdict == .valid ? .accept : .reject, errorClass: report.errorClass?.rawValue,
                       message: report.verdict == .valid ? nil : report.message, decoded: nil)
    }
}
