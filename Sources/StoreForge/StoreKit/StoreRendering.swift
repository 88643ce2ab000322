#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import _ForgeSupport
public import StoreModel
public import AppStoreVocabulary

/// One store as a server renders it, transaction by transaction: the same ``World`` and the same signer as
/// ``Forge/make(_:scenario:now:options:)``, so the transaction `forge jws make transaction` picks is rendered
/// here to the same payload bytes (and, RFC 6979 nonces, the same JWS) when both look at the same instant.
///
/// The App Store Server API (`forge serve`) answers from one of these per scenario and request clock.
public struct StoreRendering: Sendable {
    private let world: World
    private let forge: Forge

    /// The store at the rendering's clock: the scenario's purchases as made at its `now`, the timeline's
    /// events up to the clock.
    public var store: Store { world.store }
    /// The `environment` every payload claims.
    public var environment: Environment { world.environment }
    /// The app's Apple id as payloads carry it (nil outside Production when the receipt's is 0).
    public var appAppleID: Int64? { world.appAppleID }
    /// The customer's `appTransactionId`, in every transaction payload of the store.
    public var appTransactionID: String { world.appTransactionID }
    /// Signed with the Xcode certificate (an `xcode-*` preset): every id is "0".
    public var isXcode: Bool { world.isXcode }

    init(world: World, forge: Forge) {
        self.world = world
        self.forge = forge
    }

    /// The same store looked at `instant`, as `Forge.rendering(scenario, madeAt:, now: instant)` renders it (the same
    /// bytes) without making its purchases again: a server signing each notification as of its own instant.
    public func at(_ instant: Date) throws(ForgeError) -> StoreRendering {
        StoreRendering(world: try World(store: try world.store.reissued(at: instant), options: world.options), forge: forge)
    }

    /// `t`'s JWSTransactionDecodedPayload, as `forge jws make transaction --about` renders the latest of a product.
    public func transactionPayload(_ t: Transaction) throws(ForgeError) -> JSONValue { try world.transaction(t) }

    /// `t`'s signed transaction (`signedTransactionInfo`).
    public func signedTransaction(_ t: Transaction) throws(ForgeError) -> String {
        try forge.sign(try world.transaction(t), xcode: world.isXcode)
    }

    /// The signed renewal info (`signedRenewalInfo`) of the subscription whose latest transaction is `t`.
    public func signedRenewal(of t: Transaction) throws(ForgeError) -> String {
        try forge.sign(try world.renewal(of: t), xcode: world.isXcode)
    }

    /// The customer's signed AppTransaction (`signedAppTransactionInfo`), as `forge jws make app-transaction` renders it.
    public func signedAppTransaction() throws(ForgeError) -> String { try forge.sign(world.appTransaction(), xcode: world.isXcode) }

    /// A realtime request (Retention Messaging) about `t`, as `forge jws make realtime` renders one about the latest
    /// purchase, unsigned: the served performance test sends it many times, each with its own `requestIdentifier`.
    public func realtimePayload(about t: Transaction) throws(ForgeError) -> JSONValue {
        var payload = try world.realtime()
        try payload.edit("/originalTransactionId", setting: world.id(t.originalTransactionID))
        try payload.edit("/productId", setting: .string(t.productID))
        return payload
    }

    /// `payload` signed as this store's JWS are (the Xcode key for an `xcode-*` store).
    public func sign(_ payload: JSONValue) throws(ForgeError) -> String { try forge.sign(payload, xcode: world.isXcode) }

    /// A notification of `type` (and `subtype`) about `t`, signed at the rendering's clock, its nested transaction
    /// and renewal info signed too; without `t`, Apple's TEST shape; RESCIND_CONSENT about the app, its AppTransaction
    /// signed in `appData`. `uuid` is its `notificationUUID`: one store
    /// sends many notifications, each its own.
    public func signedNotification(
        _ type: NotificationType, subtype: NotificationSubtype?, about t: Transaction?, uuid: String, consumptionRequestReason: ConsumptionRequestReason? = nil
    ) throws(ForgeError) -> String {
        var options = world.options
        if let consumptionRequestReason { options.consumptionRequestReason = consumptionRequestReason }
        options.notificationType = .known(type)
        options.subtype = subtype.map(WireValue.known)
        options.productID = t?.productID
        let world = try World(store: world.store, options: options)
        var payload: JSONValue
        if type == .rescindConsent {
            payload = world.notification(signedTransaction: nil, signedRenewal: nil, signedAppTransaction: try signedAppTransaction())
        } else if let t {
            let signedTransaction = try forge.sign(try world.transaction(t), xcode: world.isXcode)
            let signedRenewal = t.type == .autoRenewable ? try forge.sign(try world.renewal(of: t), xcode: world.isXcode) : nil
            payload = world.notification(signedTransaction: signedTransaction, signedRenewal: signedRenewal)
        } else {
            payload = world.notification(signedTransaction: nil, signedRenewal: nil)
        }
        try payload.edit("/notificationUUID", setting: .string(uuid))
        return try forge.sign(payload, xcode: world.isXcode)
    }

    /// The status of `t`'s subscription (`t` its latest transaction) at the store's instant: the `status` of a
    /// notification's `data` and of the Server API.
    public func subscriptionStatus(_ t: Transaction) -> SubscriptionStatus { store.subscriptionStatus(of: t) }

    /// The `subscriptionGroupIdentifier` payloads carry for a subscription product.
    public func groupIdentifier(_ productID: String) -> String { world.groupIdentifier(productID) }
}

extension Forge {
    /// `scenario` made at `madeAt` (its `now`: that fixes the ids) and looked at `now` (the timeline's events
    /// up to then; `signedDate` is `now`), ready to render any of its transactions. With `now == madeAt` and
    /// default options, the latest transaction renders as `make(.transaction, scenario:, now: madeAt)` does.
    public func rendering(_ scenario: Scenario, madeAt: Date, now: Date, options: JWSOptions = JWSOptions()) throws(ForgeError) -> StoreRendering {
        let store = try Store(scenario, now: madeAt, reissuedAt: now == madeAt ? nil : now)
        return StoreRendering(world: try World(store: store, options: options), forge: self)
    }
}
