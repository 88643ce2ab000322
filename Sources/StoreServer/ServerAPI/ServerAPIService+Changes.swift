#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import _ForgeSupport
import StoreForge
import StoreModel
import Synchronization

/// The endpoints that change the store: Set App Account Token, Extend a Subscription Renewal Date (one and
/// mass, with the mass request's status), and Look Up Order ID, which reads what only a mock can serve
/// (Apple has no order lookup in the sandbox). A change is a timeline event added to the customer's scenario at
/// the request's clock, never behind the server's (``ServerState``).
extension ServerAPIService {
    /// The body of a PUT or POST: a JSON object, else 4000000.
    func object(_ body: [UInt8]) throws(ServerAPIError) -> JSONValue {
        guard let value = try? JSONValue(parsing: body), value.objectValue != nil else { throw .generalBadRequest }
        return value
    }

    // MARK: - Look Up Order ID

    /// `status` 0 and the order's transactions, or `status` 1 (no such order). Production only: Apple's sandbox
    /// has no order lookup, so `forge serve` answers the sandbox path with 404 and no body. [guess: the
    /// sandbox's exact answer is undocumented]
    func lookUpOrder(_ orderID: String, scope: Scope, now: Date) throws(ServerAPIError) -> OrderLookupResponse {
        for view in views(scope: scope, now: now) {
            let order = view.transactions.filter { view.rendering.store.orderID(of: $0) == orderID }
            guard !order.isEmpty else { continue }
            var signedTransactions: [String] = []
            for t in order { signedTransactions.append(try signed { () throws(ForgeError) in try view.rendering.signedTransaction(t) }) }
            return OrderLookupResponse(status: .valid, signedTransactions: signedTransactions)
        }
        return OrderLookupResponse(status: .invalid, signedTransactions: [])
    }

    // MARK: - Set App Account Token

    /// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`: every transaction of the purchase
    /// carries the token in JWS rendered from now on, in place of the one set before. 4000183 not a UUID, 4000006
    /// not an id, 4040010 unknown, 4000187 a transaction id that is not the purchase's original one.
    func setAppAccountToken(_ id: String, body: [UInt8], scope: Scope, now: Date) throws(ServerAPIError) -> String {
        let request = try object(body)
        guard let token = request["appAccountToken"]?.stringValue, UUID(uuidString: token) != nil else { throw .invalidAppAccountTokenUUID }
        let view = try view(of: id, anyID: false, scope: scope, now: now)
        guard let purchase = view.transactions.first(where: { $0.originalTransactionID == id }) else {
            throw .transactionIDIsNotOriginalTransactionID
        }
        let event = TimelineEvent(
            .appAccountToken, at: ReceiptDate.format(now), productID: purchase.productID, token: token.lowercased(), originalTransactionID: id)
        try state.change { (state) throws(ServerAPIError) in state.setAppAccountToken(event, toCustomer: view.customer) }
        return token.lowercased()
    }

    // MARK: - Extend a Subscription Renewal Date

    /// Apple's extension limits: 1–90 days a time, reason codes 0–3, at most twice in 365 days per subscription.
    static let extensionDays: ClosedRange<Int64> = 1...90
    static let extensionReasons: ClosedRange<Int64> = 0...3
    static let extensionsPerYear = 2
    /// `requestIdentifier`: a UUID in Apple's examples; any text up to this length here.
    static let requestIdentifierLength = 1...128
    /// `productId`: Apple documents no maximum for the Server API's; its External Purchase Server API caps a
    /// product identifier at 256 bytes, and so does forge wherever a client sends one (4000023 past it). [guess]
    static let productIDLength = 1...256

    /// The body's days, reason and request identifier, or their errors (4000009, 4000010, 4000011).
    private func extensionRequest(_ request: JSONValue) throws(ServerAPIError) -> (days: Int, reason: Int64, identifier: String) {
        guard let days = request["extendByDays"]?.integerValue, Self.extensionDays.contains(days) else { throw .invalidExtendByDays }
        guard let reason = request["extendReasonCode"]?.integerValue, Self.extensionReasons.contains(reason) else { throw .invalidExtendReasonCode }
        guard let identifier = request["requestIdentifier"]?.stringValue, Self.requestIdentifierLength.contains(identifier.utf8.count) else {
            throw .invalidRequestIdentifier
        }
        return (Int(days), reason, identifier)
    }

    /// Why the subscription whose latest transaction is `t` cannot be extended at `now`: it is not active
    /// (expired, revoked, in billing retry or grace), or in a free trial (4030004); or it was extended twice
    /// within 365 days of `now`, before or after it (4030005): an extension dated ahead by `X-Forge-Now` counts
    /// too, so no 365 days ever hold three.
    private func checkExtensible(_ t: Transaction, in view: View, customer: ServerState.Customer, now: Date) throws(ServerAPIError) {
        guard t.type == .autoRenewable, view.rendering.subscriptionStatus(t) == .active, !t.isTrialPeriod else { throw .subscriptionExtensionIneligible }
        let year: TimeInterval = 365 * 86_400
        let recent = (customer.scenario.timeline ?? []).filter { event in
            guard event.event == .extend, event.productID == t.productID, let at = event.at.flatMap(ReceiptDate.parse) else { return false }
            return abs(at.timeIntervalSince(now)) < year
        }
        guard recent.count < Self.extensionsPerYear else { throw .subscriptionMaxExtension }
    }

    /// The latest transaction of the subscription `originalTransactionID` names in `view`.
    private func latest(of originalTransactionID: String, in view: View) -> Transaction? {
        view.transactions.filter { $0.originalTransactionID == originalTransactionID }.max { $0.purchaseDate < $1.purchaseDate }
    }

    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`: the period in force ends `extendByDays`
    /// later (the JWS's `expiresDate`, the renewal info's `renewalDate`), and a RENEWAL_EXTENDED notification is
    /// in the history. The same request identifier again answers as the first time and extends nothing.
    ///
    /// The store is rendered outside the lock; under it, a state that moved since (another change came first) is
    /// rendered again, so the answer's `effectiveDate` is always that of the state the extension is made on.
    func extendRenewalDate(_ id: String, body: [UInt8], scope: Scope, now: Date) throws(ServerAPIError) -> ExtendRenewalDateResponse {
        let (days, _, identifier) = try extensionRequest(try object(body))
        guard ServerAPIIdentifier.isWellFormed(id) else { throw .invalidOriginalTransactionID }
        let (customers, version) = state.snapshot()
        let rendered: View
        do { rendered = try self.view(of: id, anyID: true, scope: scope, now: now, customers: customers) } catch { throw .originalTransactionIDNotFound }
        let key = Self.extensionKey(customer: rendered.customer, requestIdentifier: identifier, originalTransactionID: id)
        return try state.change { (state) throws(ServerAPIError) -> ExtendRenewalDateResponse in
            if let answered = state.extensionAnswers[key] { return answered }
            var view = rendered
            if state.version != version {
                do { view = try self.view(of: id, anyID: true, scope: scope, now: now, customers: state.customers) } catch { throw .originalTransactionIDNotFound }
            }
            guard let t = latest(of: id, in: view) else { throw .originalTransactionIDNotFound }
            try checkExtensible(t, in: view, customer: state.customers[view.customer], now: now)
            state.append(TimelineEvent(.extend, at: ReceiptDate.format(now), productID: t.productID, days: days), toCustomer: view.customer)
            let effective = t.expiresDate.map { $0.addingTimeInterval(Double(days) * 86_400) } ?? now
            let answer = ExtendRenewalDateResponse(
                originalTransactionId: id, webOrderLineItemId: String(t.webOrderLineItemID), success: true,
                effectiveDate: ReceiptDate.milliseconds(effective) ?? 0)
            state.remember(extensionAnswer: answer, key: key)
            return answer
        }
    }

    /// What an extension's answer is kept by: the customer (so one app's request identifiers never answer another's)
    /// and the request identifier with the original transaction id.
    static func extensionKey(customer: Int, requestIdentifier: String, originalTransactionID: String) -> String {
        JSONValue.array([.integer(Int64(customer)), .string(requestIdentifier), .string(originalTransactionID)]).serialized(pretty: false)
    }

    /// What a mass extension is kept by: the environment, the app (the token's; every app's under `--no-auth`, one
    /// namespace), the product and the request identifier. One app never reads or blocks another's.
    static func massExtensionKey(scope: Scope, productID: String, requestIdentifier: String) -> String {
        JSONValue.array([.string(scope.environment.rawValue), scope.app.map(JSONValue.string) ?? .null, .string(productID), .string(requestIdentifier)])
            .serialized(pretty: false)
    }

    /// A `productId` a client sent, or 4000023.
    static func productID(_ value: JSONValue?) throws(ServerAPIError) -> String {
        guard let productID = value?.stringValue, productIDLength.contains(productID.utf8.count) else { throw .invalidProductID }
        return productID
    }

    /// `POST /inApps/v1/subscriptions/extend/mass`: every active subscription to `productId` in scope, in the
    /// storefronts named (forge's stores are all in USA), is extended as one extension would be; those that
    /// are not eligible count as failed. Completes at once.
    func massExtendRenewalDate(body: [UInt8], scope: Scope, now: Date) throws(ServerAPIError) -> MassExtendRenewalDateResponse {
        let request = try object(body)
        let (days, _, identifier) = try extensionRequest(request)
        let productID = try Self.productID(request["productId"])
        var storefronts: [String]?
        if let list = request["storefrontCountryCodes"], list != .null {
            guard let codes = list.arrayValue else { throw .invalidStorefrontCountryCode }
            guard !codes.isEmpty else { throw .invalidEmptyStorefrontCountryCodeList }
            storefronts = try codes.map { (code) throws(ServerAPIError) -> String in
                guard let text = code.stringValue, text.utf8.count == 3, text.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) else {
                    throw .invalidStorefrontCountryCode
                }
                return text
            }
        }
        let (customers, version) = state.snapshot()
        let rendered = views(scope: scope, now: now, customers: customers)
        let stamp = ReceiptDate.format(now)
        let key = Self.massExtensionKey(scope: scope, productID: productID, requestIdentifier: identifier)
        let answer = MassExtendRenewalDateResponse(requestIdentifier: identifier)
        return try state.change { (state) throws(ServerAPIError) -> MassExtendRenewalDateResponse in
            if state.massExtensions[key] != nil { return answer }
            let views = state.version == version ? rendered : self.views(scope: scope, now: now, customers: state.customers)
            var succeeded = 0
            var failed = 0
            for view in views where storefronts.map({ $0.contains("USA") }) ?? true {
                let originals = Set(view.transactions.filter { $0.productID == productID && $0.type == .autoRenewable }.map(\.originalTransactionID))
                for original in originals.sorted() {
                    guard let t = latest(of: original, in: view) else { continue }
                    do throws(ServerAPIError) {
                        try checkExtensible(t, in: view, customer: state.customers[view.customer], now: now)
                        state.append(TimelineEvent(.extend, at: stamp, productID: productID, days: days), toCustomer: view.customer)
                        succeeded += 1
                    } catch {
                        failed += 1
                    }
                }
            }
            state.remember(ServerState.MassExtension(productID: productID, completedAt: now, succeeded: succeeded, failed: failed), key: key)
            return answer
        }
    }

    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`, or 4040009 (also for another
    /// app's request).
    func massExtensionStatus(productID: String, requestIdentifier: String, scope: Scope) throws(ServerAPIError) -> MassExtendRenewalDateStatusResponse {
        let productID = try Self.productID(.string(productID))
        guard Self.requestIdentifierLength.contains(requestIdentifier.utf8.count) else { throw .invalidRequestIdentifier }
        let key = Self.massExtensionKey(scope: scope, productID: productID, requestIdentifier: requestIdentifier)
        guard let request = state.mutable.withLock({ $0.massExtensions[key] }) else { throw .statusRequestNotFound }
        return MassExtendRenewalDateStatusResponse(
            requestIdentifier: requestIdentifier, complete: true, completeDate: ReceiptDate.milliseconds(request.completedAt) ?? 0,
            succeededCount: Int64(request.succeeded), failedCount: Int64(request.failed))
    }
}
