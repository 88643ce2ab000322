// stdin: the JWS; RF_TRUST_ANCHOR (DER path), RF_BUNDLE_ID, RF_ENVIRONMENT, RF_APP_APPLE_ID, RF_ARTIFACT. Exit 0
// accepts, 1 rejects (the reason on stderr), 2 is a harness error. On top of X5CVerifier, the checks every server
// must add itself: bundleId, environment, appAppleId in Production (from data, summary, externalPurchaseToken or
// RESCIND_CONSENT's appData), and a notification's nested JWS.
import Foundation
import JWTKit

/// Every StoreKit 2 payload, loosely: only what the claim checks read.
struct StoreKitPayload: JWTPayload {
    struct Claims: Codable {
        var bundleId: String?
        var environment: String?
        var appAppleId: Int64?
        var externalPurchaseId: String?
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?
        var signedAppTransactionInfo: String?
    }
    var bundleId: String?
    var environment: String?
    var receiptType: String?
    var appAppleId: Int64?
    var signedDate: Double?
    var data: Claims?
    var summary: Claims?
    var externalPurchaseToken: Claims?
    var appData: Claims?
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

func reject(_ reason: String) -> Never {
    FileHandle.standardError.write(Foundation.Data((reason + "\n").utf8))
    exit(1)
}

let environment = ProcessInfo.processInfo.environment
guard let anchorPath = environment["RF_TRUST_ANCHOR"], let root = FileManager.default.contents(atPath: anchorPath) else { exit(2) }
let token = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)

/// The validity instant: signedDate from the (not yet verified) payload, as Apple's libraries take it.
func instant(of token: String) -> Date {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3 else { return Date() }
    var text = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    text += String(repeating: "=", count: (4 - text.count % 4) % 4)
    guard let data = Foundation.Data(base64Encoded: text), let claims = try? JSONDecoder().decode(StoreKitPayload.self, from: data), let signed = claims.signedDate
    else { return Date() }
    return Date(timeIntervalSince1970: signed / 1000)
}

func verified(_ token: String, _ verifier: X5CVerifier) async throws -> StoreKitPayload {
    try await verifier.verifyJWS(token, as: StoreKitPayload.self, jsonDecoder: JSONDecoder(), validationTime: .fixed(instant(of: token)))
}

do {
    let verifier = try X5CVerifier(rootCertificates: [root])
    let payload = try await verified(token, verifier)
    let artifact = environment["RF_ARTIFACT"] ?? ""
    let inner = payload.data ?? payload.summary ?? payload.externalPurchaseToken ?? payload.appData
    let bundleId = inner?.bundleId ?? payload.bundleId
    var actualEnvironment = artifact == "jws-app-transaction" ? payload.receiptType : (inner?.environment ?? payload.environment)
    if actualEnvironment == nil, let id = inner?.externalPurchaseId { actualEnvironment = id.hasPrefix("SANDBOX") ? "Sandbox" : "Production" }
    if let bundle = environment["RF_BUNDLE_ID"], !bundle.isEmpty, artifact != "jws-renewal", artifact != "jws-realtime", bundleId != bundle {
        reject("bundleId \(bundleId ?? "absent")")
    }
    let expected = environment["RF_ENVIRONMENT"] ?? ""
    if !expected.isEmpty, actualEnvironment != expected { reject("environment \(actualEnvironment ?? "absent")") }
    if expected == "Production", ["jws-app-transaction", "jws-notification", "jws-realtime"].contains(artifact),
        (inner?.appAppleId ?? payload.appAppleId).map(String.init) != environment["RF_APP_APPLE_ID"]
    {
        reject("appAppleId")
    }
    for nested in [payload.data?.signedTransactionInfo, payload.data?.signedRenewalInfo].compactMap({ $0 }) {
        let claims = try await verified(nested, verifier)
        if !expected.isEmpty, claims.environment != expected { reject("nested environment") }
        if let bundle = environment["RF_BUNDLE_ID"], !bundle.isEmpty, let nestedBundle = claims.bundleId, nestedBundle != bundle { reject("nested bundleId") }
    }
    // RESCIND_CONSENT's AppTransaction, whose environment is its receiptType.
    if let nested = payload.appData?.signedAppTransactionInfo {
        let claims = try await verified(nested, verifier)
        if !expected.isEmpty, claims.receiptType != expected { reject("nested receiptType") }
        if let bundle = environment["RF_BUNDLE_ID"], !bundle.isEmpty, claims.bundleId != bundle { reject("nested bundleId") }
    }
} catch {
    reject("\(error)")
}
