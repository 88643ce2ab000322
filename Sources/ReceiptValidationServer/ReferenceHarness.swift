#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import ForgeCrypto
package import ReceiptConformance
package import ReceiptCorpus
package import ReferenceValidation
import ReceiptModel
import _ForgeSupport
import StoreModel

/// The reference validator behind the harness protocol: the `swift:reference` target of `forge run`,
/// and the model for wiring a Swift validator to `ConformanceRunner`. It lives here, in the adapter layer, so the
/// validator never imports the runner that judges validators.
package struct ReferenceHarness: ReceiptValidator {
    /// Trust anchor id (as vectors name them) → certificate.
    package let anchors: [String: X509Certificate]
    /// Online checks for the vectors that name a responder; nil: offline.
    package let online: OnlineRevocation?

    package init(anchors: [String: X509Certificate], online: OnlineRevocation? = nil) {
        self.anchors = anchors
        self.online = online
    }

    /// `swift:reference`, for ``ConformanceRunner/check(target:providers:vectors:profile:baseline:configure:)`` and `forge run`.
    /// `swift:reference-online` checks revocation online for the vectors that name a responder (`context.ocsp`).
    package static let provider = InProcessTargets([
        "reference": { try ReferenceHarness(vectorsDirectory: $0) }, "reference-online": { try ReferenceHarness(vectorsDirectory: $0, online: OnlineRevocation()) },
    ])

    /// Loads the trust anchors a corpus names; with `online`, it declares the `online` feature and checks the
    /// revocation of the chains whose context names a responder, as Apple's verifiers with online checks on do.
    package init(vectorsDirectory: URL, online: OnlineRevocation? = nil) throws {
        self.online = online
        let manifest = try ManifestIO.load(from: vectorsDirectory)
        var anchors: [String: X509Certificate] = [:]
        for (id, anchor) in manifest.trustAnchors {
            anchors[id] = try X509Certificate(derEncoded: [UInt8](Data(contentsOf: vectorsDirectory.appendingPathComponent(anchor.file))))
        }
        self.anchors = anchors
    }

    package func hello() async -> HarnessHello { helloMessage() }

    /// Every feature but `online`, which `swift:reference-online` adds: its answers need the responder `forge run`
    /// starts for the run, and are dated by the wall clock, where the rest is judged at the pinned one.
    package static let features = Feature.allCases.filter { $0 != .online }

    package func helloMessage() -> HarnessHello {
        HarnessHello(
            implementation: "receipt-forge reference validator\(online == nil ? "" : ", online")",
            features: (online == nil ? Self.features : Feature.allCases).map(\.rawValue), artifacts: ArtifactGroup.allCases,
            errorGranularity: .fine, clockInjection: true, maxConcurrency: ProcessInfo.processInfo.activeProcessorCount)
    }

    /// Online (`swift:reference-online`), a JWS whose context names a responder is verified with its revocation
    /// checked, suspending while the responders answer; everything else is ``reply(to:)``.
    package func validate(_ request: ValidateRequest) async -> HarnessReply {
        guard let online, request.context.ocsp != nil, request.context.artifactKind != .receipt else { return reply(to: request) }
        switch inputs(of: request) {
        case .refused(let reply): return reply
        case .ready(let bytes, let context):
            return await JWSVerifier().verify(bytes, as: request.context.artifactKind.jwsKind, context: context, online: online).harnessReply(
                seq: request.seq)
        }
    }

    /// In process it takes the vector's bytes as they are; over stdio or HTTP it decodes `input.data`.
    package var readsBytes: Bool { true }

    /// The offline answer without suspension, for callers already on a thread of their own (an HTTP event loop).
    /// The vector's artefact kind picks the validator; both are configured from the one context, as Apple's
    /// libraries would be for this app.
    package func reply(to request: ValidateRequest) -> HarnessReply {
        switch inputs(of: request) {
        case .refused(let reply): return reply
        case .ready(let bytes, let context):
            return request.context.artifactKind.referenceValidator.check(bytes, as: request.context.artifactKind, context: context).harnessReply(seq: request.seq)
        }
    }

    private enum Inputs {
        case ready([UInt8], ValidationContext)
        case refused(HarnessReply)
    }

    /// The request's bytes and the validation context it names, or the `errored` reply that says why there are none.
    private func inputs(of request: ValidateRequest) -> Inputs {
        guard let bytes = request.bytes ?? Base64.decodeStandard(request.input.data) else {
            return .refused(.errored(seq: request.seq, message: "input.data is not base64"))
        }
        guard let context = validationContext(request.context) else { return .refused(.errored(seq: request.seq, message: "context.now is not a date")) }
        return .ready(bytes, context)
    }

    private func validationContext(_ context: Context) -> ValidationContext? {
        guard let now = ReceiptDate.parse(context.now) else { return nil }
        return ValidationContext(
            trustedRoots: anchors[context.trustAnchor].map { [$0] } ?? [], bundleID: context.bundleId,
            appVersion: context.appVersion, deviceID: context.deviceId.flatMap(DeviceID.init)?.bytes, appAppleID: context.appAppleId,
            environment: context.environment, now: now)
    }
}

extension CheckedReport {
    /// The harness protocol's answer to request `seq`.
    package func harnessReply(seq: Int) -> HarnessReply {
        .result(
            seq: seq, verdict: verdict == .valid ? .accept : .reject, errorClass: errorClass?.rawValue, message: verdict == .valid ? nil : message,
            decoded: nil)
    }
}
