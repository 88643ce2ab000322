/// The App Store's environments, with Apple's raw values (app-store-server-library `Environment`): what a StoreKit 2
/// payload's `environment` (an AppTransaction's `receiptType`) says.
public enum Environment: String, Sendable, Hashable, CaseIterable, Codable {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"

    /// The environment of a receipt type (attribute 0, verifyReceipt's `receipt_type`): `ProductionSandbox` → sandbox.
    /// Its own raw values are read too (a spec may say `Sandbox`); nil for anything else.
    public init?(receiptType: String) {
        if let known = ReceiptType(rawValue: receiptType) {
            self = known.environment
        } else if let environment = Environment(rawValue: receiptType) {
            self = environment
        } else {
            return nil
        }
    }

    /// The receipt type a receipt of this environment carries.
    public var receiptType: ReceiptType {
        switch self {
        case .production: .production
        case .sandbox: .productionSandbox
        case .xcode: .xcode
        case .localTesting: .localTesting
        }
    }
}

/// The receipt types (attribute 0) Apple writes, verifyReceipt's `receipt_type` plus Xcode's and local testing's.
/// A scenario may still carry any text there (the corpus forges odd ones); these are the ones the CLI offers.
public enum ReceiptType: String, Sendable, Hashable, CaseIterable, Codable {
    case production = "Production"
    case productionSandbox = "ProductionSandbox"
    case productionVPP = "ProductionVPP"
    case productionVPPSandbox = "ProductionVPPSandbox"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"

    public var environment: Environment {
        switch self {
        case .production, .productionVPP: .production
        case .productionSandbox, .productionVPPSandbox: .sandbox
        case .xcode: .xcode
        case .localTesting: .localTesting
        }
    }
}
