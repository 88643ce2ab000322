#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif
package import ForgeCrypto
package import StoreForge
import _ForgeSupport
import ReceiptCorpus
package import StoreModel

/// `forge serve` as a value: what its command line says, read and checked, with nothing built yet. The CLI fills it
/// and nothing more; ``components(openState:)`` builds the parts socket-free, and `ForgeServers.buildServeApplication`
/// (HTTPServers) the server around them — the one composition root, for `forge-http` and tests alike.
package struct ServeConfiguration: Sendable {
    /// Where to listen; with ``servesTLS`` its certificate is issued at build time by ``receiptPKI``.
    package var listener: ServerListener
    package var servesTLS = false
    /// The receipt TEST PKI: signs re-issued receipts, the serving certificate and verifyReceipt's named anchors.
    package var receiptPKI: CertificateSet<CertificateRole>
    /// One customer each (`--scenario`, `--storekit`), every one with its `now`.
    package var scenarios: [Scenario] = []
    /// The server clock's start; the wall clock when nil.
    package var now: Date?
    /// Store seconds per wall second (`--time-rate`); the wall clock's pace when nil.
    package var timeRate: Double?
    /// verifyReceipt's checks: the roots receipts chain to, the shared secret, the legacy 21006. Its `now` is ``now``.
    package var trustedRoots: [X509Certificate] = []
    package var sharedSecret: String?
    package var legacyExpiredStatus = false
    /// Who may call the Server API.
    package var access: ServerAPIService.Access = .closed
    /// `--rate-limits apple`.
    package var appleRateLimits = true
    /// `--notify`, `--notify-sandbox`, their timeout and trust; nil without a webhook.
    package var webhooks: NotificationDispatcher.Webhooks?
    /// `--state FILE`.
    package var statePath: String?
    /// `--fault`, in order, and the seed of their `percent=` draws.
    package var faults: [Fault] = []
    package var faultSeed: UInt64 = 0
    /// `--log FILE` and the in-memory log's capacity.
    package var logPath: String?
    package var logCapacity = ServerLimits.defaultLogCapacity
    /// `--control-token`: without it the control routes answer loopback clients only.
    package var controlToken: String?
    /// `--ocsp`, `--ocsp-ca`, `--ocsp-answer`; nil without an OCSP responder.
    package var ocsp: OCSP?
    /// Where warnings go (stderr in `forge serve`): a state or log file that refuses a write, dropped notifications.
    package var warn: @Sendable (String) -> Void = { _ in }

    /// The OCSP responder asked for: the JWS certificate sets it also answers for, and the answers set at the start.
    package struct OCSP: Sendable {
        package var jwsSets: [CertificateSet<JWSRole>]
        package var answers: [String]

        package init(jwsSets: [CertificateSet<JWSRole>] = [], answers: [String] = []) {
            self.jwsSets = jwsSets
            self.answers = answers
        }
    }

    package init(listener: ServerListener, receiptPKI: CertificateSet<CertificateRole>) {
        self.listener = listener
        self.receiptPKI = receiptPKI
    }

    /// Every part of the server, built and checked before anything listens: the state (resumed from ``statePath``,
    /// opened by `openState`), the forge, both APIs' services on that one state, the faults, the request log, the
    /// serving certificate and the OCSP responder. A failure is a ``ServeError`` whose code says whose it is.
    package func components(openState: (String) throws(ServeError) -> any ServerStateStore) throws(ServeError) -> ServeComponents {
        let store: (any ServerStateStore)?
        let saved: SavedState
        do {
            store = try statePath.map(openState)
            saved = try store?.load() ?? SavedState()
        } catch { throw ServeError(.stateFailed, "\(ServeOption.state): \(error.message)") }
        let histories: ServerHistories
        let serverAPI: ServerAPIService
        do {
            let forge = try Forge(receiptPKI: receiptPKI)
            // One state for both APIs: what the Server API changes, verifyReceipt shows, on one clock.
            let state = try ServerState(scenarios: scenarios, now: now, timeRate: timeRate, store: store, saved: saved)
            let deliveries = webhooks.map { NotificationDispatcher($0, saved: saved, store: store) }
            histories = try ServerHistories(state: state, forge: forge)
            serverAPI = try ServerAPIService(
                state: state, forge: forge,
                configuration: .init(now: now, access: access, rateLimits: appleRateLimits ? ServerAPIRateLimits() : nil, deliveries: deliveries))
        } catch {
            let code: ServeError.Code = error.code == .invalidScenario || error.code == .conflictingOptions ? .invalidScenario : .cannotStart
            throw ServeError(code, error.description)
        }
        let transactionReceiptRoots: [X509Certificate]
        do throws(ForgeError) {
            transactionReceiptRoots = [try CertificateSet<TransactionReceiptRole>.bundled().certificate(.iTunesStoreCA), receiptPKI.certificate(.intermediateSHA1)]
        } catch { throw ServeError(.cannotStart, error.description) }
        let anchors = [
            TrustAnchorID.forgeRoot: receiptPKI.certificate(.root), TrustAnchorID.forgeStoreKit: receiptPKI.certificate(.storeKit),
            TrustAnchorID.forgeITunesStoreCA: transactionReceiptRoots[0], TrustAnchorID.forgeWWDRSHA1: transactionReceiptRoots[1],
        ]
        let service = VerifyReceiptService(
            configuration: .init(
                trustedRoots: trustedRoots, sharedSecret: sharedSecret, legacyExpiredStatus: legacyExpiredStatus, now: now, namedAnchors: anchors,
                transactionReceiptRoots: transactionReceiptRoots),
            histories: histories)
        let plan: FaultPlan
        do { plan = try FaultPlan(faults, seed: faultSeed) } catch { throw ServeError(.invalidFault, "\(ServeOption.fault) \(error.message)") }
        let log = try RequestLog(file: logPath.map { URL(fileURLWithPath: $0) }, capacity: logCapacity, warn: warn)
        var listener = listener
        if servesTLS {
            do { listener.tls = try ServingCredentials.issue(for: listener.host, by: receiptPKI) } catch {
                throw ServeError(.cannotStart, "cannot issue the serving certificate: \(error)")
            }
        }
        var responder: OCSPService?
        if let ocsp {
            do throws(ForgeError) {
                let made = try OCSPService(jwsSets: ocsp.jwsSets)
                for spec in ocsp.answers { try made.set(spec: spec) }
                responder = made
            } catch { throw ServeError(.invalidScenario, "\(ServeOption.ocspCA): \(error.message)") }
        }
        return ServeComponents(listener: listener, service: service, serverAPI: serverAPI, faults: plan, log: log, controlToken: controlToken, ocsp: responder)
    }
}

/// The parts of `forge serve`, built (``ServeConfiguration/components(openState:)``, or by a test that wants its own).
package struct ServeComponents: Sendable {
    package var listener: ServerListener
    package var service: VerifyReceiptService
    package var serverAPI: ServerAPIService
    package var faults: FaultPlan
    package var log: RequestLog
    package var controlToken: String?
    package var ocsp: OCSPService?

    package init(
        listener: ServerListener, service: VerifyReceiptService, serverAPI: ServerAPIService = ServerAPIService(), faults: FaultPlan, log: RequestLog,
        controlToken: String? = nil, ocsp: OCSPService? = nil
    ) {
        self.listener = listener
        self.service = service
        self.serverAPI = serverAPI
        self.faults = faults
        self.log = log
        self.controlToken = controlToken
        self.ocsp = ocsp
    }
}
