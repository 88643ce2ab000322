#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import AppStoreVocabulary
import StoreForge
import Synchronization
import _ForgeSupport
import StoreModel

/// Apple's Retention Messaging API (`/inApps/v1/messaging/…`), served beside the App Store Server API under the same
/// mounts, tokens, rate limits, faults and request log, its configuration kept per environment and app
/// (``RetentionMessagingState``). The paths, methods, bodies and answers are those of Apple's Python client 3.1.2
/// (`api_client.py`, `models/`); the limits and error codes Apple's documentation's:
///
/// - Upload Image: a PNG without transparency (4000161); `FULL_SIZE` (the default) exactly 3840 wide and 160-2160 high,
///   `BULLET_POINT` any size (Apple's page gives no figure here), another `imageSize` 4000216; 2000 an app (4030014);
///   an identifier already used 4090000.
/// - Upload Message: `header` ≤ 66 characters (4000162), `body` ≤ 144 (4000163), alternative texts ≤ 150 (4000175),
///   ≤ 5 bullet points (4000218) of ≤ 66 characters (4000219), `ABOVE_IMAGE` only with an image (4000224); its images
///   uploaded (4040014) at their size (4000216); an identifier already used 4090001; 2000 an app (4030016).
/// - Images and messages are `APPROVED` at upload (Apple's review has no API; forge approves at once, so the same
///   calls always answer alike): 4030017 and 4030018 never happen here. An image a message shows is not deleted (4030019);
///   a deleted message stops being any product's default.
/// - Default messages by product and locale (4000164 not a locale; 4040020 none configured); the realtime URL ≤ 256
///   characters and an http(s) URL (4000215), in production only once a performance test has passed in the sandbox
///   (4030026; 4040021 none configured).
/// - Initiate Performance Test: real, see ``initiatePerformanceTest(body:scope:now:)``.
///
/// Characters are counted as Apple's Python client counts them (`len`, Unicode scalars).
extension ServerAPIService {
    /// Apple's documented lengths (the Python client's `max_len` validators agree).
    static let headerLength = 66
    static let bodyLength = 144
    static let altTextLength = 150
    static let bulletPointLength = 66
    static let maximumBulletPoints = 5
    static let realtimeURLLength = 256
    /// Apple's full-size image: "the width must be 3840 pixels, and the height can be between 160 to 2160 pixels".
    static let fullSizeWidth: UInt32 = 3840
    static let fullSizeHeights: ClosedRange<UInt32> = 160...2160

    func retentionKey(_ scope: Scope) -> RetentionMessagingState.Key { .init(environment: scope.environment, app: scope.app ?? "") }

    /// The account as the state holds it now.
    func retentionAccount(_ scope: Scope) -> RetentionMessagingState.Account {
        state.mutable.withLock { $0.retention.account(retentionKey(scope)) }
    }

    func changeRetention<T>(_ scope: Scope, _ change: (inout RetentionMessagingState.Account) throws(ServerAPIError) -> T) throws(ServerAPIError) -> T {
        try state.change { (state) throws(ServerAPIError) in try state.retention.change(retentionKey(scope), change) }
    }

    /// A path's UUID in lower case (Apple's clients send `str(UUID)`), or `error`.
    static func identifier(_ text: String, else error: ServerAPIError) throws(ServerAPIError) -> String {
        guard let uuid = UUID(uuidString: text) else { throw error }
        return uuid.uuidString.lowercased()
    }

    static func length(_ text: String) -> Int { text.unicodeScalars.count }

    // MARK: - Images

    func uploadImage(_ id: String, query: ServerAPIQuery, body: [UInt8], scope: Scope) throws(ServerAPIError) {
        let id = try Self.identifier(id, else: .generalBadRequest)
        var size = RetentionMessagingState.ImageSize.fullSize
        if let text = query.value("imageSize") {
            guard let named = RetentionMessagingState.ImageSize(rawValue: text) else { throw .badRequestImageSize }
            size = named
        }
        guard let png = PNGHeader(body), !png.hasTransparency else { throw .invalidImage }
        if size == .fullSize, png.width != Self.fullSizeWidth || !Self.fullSizeHeights.contains(png.height) { throw .badRequestImageSize }
        try changeRetention(scope) { (account) throws(ServerAPIError) in
            guard account.images[id] == nil else { throw .imageAlreadyExists }
            guard account.images.count < RetentionMessagingState.maximumImages else { throw .maximumNumberOfImagesReached }
            account.images[id] = .init(size: size, state: .approved)
            account.imageOrder.append(id)
        }
    }

    func deleteImage(_ id: String, scope: Scope) throws(ServerAPIError) {
        let id = try Self.identifier(id, else: .generalBadRequest)
        try changeRetention(scope) { (account) throws(ServerAPIError) in
            guard account.images[id] != nil else { throw .imageNotFound }
            guard !account.messages.values.contains(where: { $0.images.contains(id) }) else { throw .imageInUse }
            account.images[id] = nil
            account.imageOrder.removeAll { $0 == id }
        }
    }

    func imageList(scope: Scope) -> GetImageListResponse {
        let account = retentionAccount(scope)
        return GetImageListResponse(
            imageIdentifiers: account.imageOrder.compactMap { id in
                account.images[id].map { GetImageListResponseItem(imageIdentifier: id, imageState: $0.state.rawValue, imageSize: $0.size.rawValue) }
            })
    }

    // MARK: - Messages

    /// Apple's `HeaderPosition`.
    enum HeaderPosition: String {
        case aboveBody = "ABOVE_BODY"
        case aboveImage = "ABOVE_IMAGE"
    }

    /// An image a message names: its identifier and alternative text checked, its size what it is used as.
    private static func messageImage(_ value: JSONValue?, size: RetentionMessagingState.ImageSize) throws(ServerAPIError) -> (id: String, size: RetentionMessagingState.ImageSize) {
        guard let image = value, image.objectValue != nil, let text = image["imageIdentifier"]?.stringValue, let alt = image["altText"]?.stringValue else {
            throw .generalBadRequest
        }
        let id = try identifier(text, else: .generalBadRequest)
        guard length(alt) <= altTextLength else { throw .altTextTooLong }
        return (id, size)
    }

    func uploadMessage(_ id: String, body: [UInt8], scope: Scope) throws(ServerAPIError) {
        let id = try Self.identifier(id, else: .generalBadRequest)
        guard let request = try? JSONValue(parsing: body), request.objectValue != nil, let header = request["header"]?.stringValue,
            let text = request["body"]?.stringValue
        else { throw .generalBadRequest }
        guard Self.length(header) <= Self.headerLength else { throw .headerTooLong }
        guard Self.length(text) <= Self.bodyLength else { throw .bodyTooLong }
        var images: [(id: String, size: RetentionMessagingState.ImageSize)] = []
        if let image = request["image"], image != .null { images.append(try Self.messageImage(image, size: .fullSize)) }
        if let position = request["headerPosition"], position != .null {
            guard let named = position.stringValue.flatMap(HeaderPosition.init(rawValue:)) else { throw .generalBadRequest }
            if named == .aboveImage, images.isEmpty { throw .aboveImageRequiresAnImage }
        }
        if let bullets = request["bulletPoints"], bullets != .null {
            guard let points = bullets.arrayValue else { throw .generalBadRequest }
            guard points.count <= Self.maximumBulletPoints else { throw .tooManyBulletPoints }
            for point in points {
                guard let pointText = point["text"]?.stringValue else { throw .generalBadRequest }
                guard Self.length(pointText) <= Self.bulletPointLength else { throw .bulletPointTextTooLong }
                images.append(try Self.messageImage(point, size: .bulletPoint))
            }
        }
        try changeRetention(scope) { (account) throws(ServerAPIError) in
            guard account.messages[id] == nil else { throw .messageAlreadyExists }
            guard account.messages.count < RetentionMessagingState.maximumMessages else { throw .maximumNumberOfMessagesReached }
            for image in images {
                guard let uploaded = account.images[image.id] else { throw .imageNotFound }
                guard uploaded.size == image.size else { throw .badRequestImageSize }
            }
            account.messages[id] = .init(state: .approved, images: Set(images.map(\.id)))
            account.messageOrder.append(id)
        }
    }

    func deleteMessage(_ id: String, scope: Scope) throws(ServerAPIError) {
        let id = try Self.identifier(id, else: .generalBadRequest)
        try changeRetention(scope) { (account) throws(ServerAPIError) in
            guard account.messages[id] != nil else { throw .messageNotFound }
            account.messages[id] = nil
            account.messageOrder.removeAll { $0 == id }
            account.defaults = account.defaults.filter { $0.value != id }
        }
    }

    func messageList(scope: Scope) -> GetMessageListResponse {
        let account = retentionAccount(scope)
        return GetMessageListResponse(
            messageIdentifiers: account.messageOrder.compactMap { id in
                account.messages[id].map { GetMessageListResponseItem(messageIdentifier: id, messageState: $0.state.rawValue) }
            })
    }

    // MARK: - Default messages

    /// A BCP 47 language tag as Apple's locales are (`en-US`, `zh-Hans-CN`; `_` taken too): a language of 2-3 letters,
    /// then subtags of 1-8 letters or digits, 35 characters at most.
    static func isLocale(_ text: String) -> Bool {
        guard (2...35).contains(text.utf8.count) else { return false }
        let parts = text.split(omittingEmptySubsequences: false) { $0 == "-" || $0 == "_" }
        guard let language = parts.first, (2...3).contains(language.count), language.allSatisfy({ $0.isASCII && $0.isLetter }) else { return false }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    /// The account's key of a default message; 4000023 not a product id, 4000164 not a locale.
    static func defaultKey(productID: String, locale: String) throws(ServerAPIError) -> String {
        guard productIDLength.contains(productID.utf8.count) else { throw .invalidProductID }
        guard isLocale(locale) else { throw .invalidLocale }
        return productID + "\n" + locale
    }

    func configureDefaultMessage(productID: String, locale: String, body: [UInt8], scope: Scope) throws(ServerAPIError) {
        let key = try Self.defaultKey(productID: productID, locale: locale)
        guard let request = try? JSONValue(parsing: body), request.objectValue != nil, let text = request["messageIdentifier"]?.stringValue else {
            throw .generalBadRequest
        }
        let id = try Self.identifier(text, else: .generalBadRequest)
        try changeRetention(scope) { (account) throws(ServerAPIError) in
            guard let message = account.messages[id] else { throw .messageNotFound }
            guard message.state == .approved else { throw .messageNotApproved }
            guard message.images.allSatisfy({ account.images[$0]?.state == .approved }) else { throw .imageNotApproved }
            guard account.defaults[key] != nil || account.defaults.count < RetentionMessagingState.maximumDefaults else { throw .generalBadRequest }
            account.defaults[key] = id
        }
    }

    func deleteDefaultMessage(productID: String, locale: String, scope: Scope) throws(ServerAPIError) {
        let key = try Self.defaultKey(productID: productID, locale: locale)
        try changeRetention(scope) { (account) throws(ServerAPIError) in
            guard account.defaults.removeValue(forKey: key) != nil else { throw .defaultMessageNotFound }
        }
    }

    func defaultMessage(productID: String, locale: String, scope: Scope) throws(ServerAPIError) -> DefaultConfigurationResponse {
        let key = try Self.defaultKey(productID: productID, locale: locale)
        guard let id = retentionAccount(scope).defaults[key] else { throw .defaultMessageNotFound }
        return DefaultConfigurationResponse(messageIdentifier: id)
    }

    // MARK: - Realtime URL

    /// The URL configured (for the request log).
    func configureRealtimeURL(body: [UInt8], scope: Scope) throws(ServerAPIError) -> String {
        guard let request = try? JSONValue(parsing: body), request.objectValue != nil, let url = request["realtimeURL"]?.stringValue,
            Self.length(url) <= Self.realtimeURLLength, (try? HTTPURL(url)) != nil
        else { throw .badRequestRealtimeURL }
        if scope.environment == .production {
            let sandbox = Scope(environment: .sandbox, app: scope.app)
            guard retentionAccount(sandbox).passedTest else { throw .forbiddenNoPassingTest }
        }
        try changeRetention(scope) { account in account.realtimeURL = url }
        return url
    }

    func deleteRealtimeURL(scope: Scope) throws(ServerAPIError) {
        try changeRetention(scope) { (account) throws(ServerAPIError) in
            guard account.realtimeURL != nil else { throw .realtimeURLNotFound }
            account.realtimeURL = nil
        }
    }

    func realtimeURL(scope: Scope) throws(ServerAPIError) -> RealtimeUrlResponse {
        guard let url = retentionAccount(scope).realtimeURL else { throw .realtimeURLNotFound }
        return RealtimeUrlResponse(realtimeURL: url)
    }

    // MARK: - Performance test

    /// Starts a performance test of the environment's realtime URL: ``PerformanceTestConfig/forge``'s requests, each a
    /// realtime request about `originalTransactionId`'s subscription signed at the server clock with its own
    /// `requestIdentifier`, are made here (on the answer pool) and handed to the server's runner (``performanceTests``),
    /// which sends them, each with its deadline, and records the outcome; meanwhile the results are `PENDING`. The
    /// request id and the requests' identifiers follow from how many tests were initiated, so a pinned clock gives the
    /// same bytes every run. Apple's test runs in the sandbox only, on "an active auto-renewable subscription": a
    /// production request, another original transaction id (not a subscription's, not active, not the sandbox's) is
    /// 4000211; no realtime URL 4040021; a test still running 4000213.
    func initiatePerformanceTest(body: [UInt8], scope: Scope, now: Date) throws(ServerAPIError) -> PerformanceTestResponse {
        guard scope.environment != .production, let request = try? JSONValue(parsing: body), let id = request["originalTransactionId"]?.stringValue,
            ServerAPIIdentifier.isWellFormed(id)
        else { throw .invalidPerformanceTestRequest }
        let account = retentionAccount(scope)
        guard let url = account.realtimeURL, let target = try? HTTPURL(url) else { throw .realtimeURLNotFound }
        guard account.runningTest == nil else { throw .existingPerformanceTestRun }
        let view = try view(of: id, anyID: true, scope: scope, now: now)
        guard view.rendering.environment == .sandbox, let latest = SubscriptionHistory.latestOfEachSubscription(view.transactions)[id],
            view.rendering.subscriptionStatus(latest) == .active
        else { throw .invalidPerformanceTestRequest }
        let config = PerformanceTestConfig.forge
        let count = try state.change { $0.retention.nextTest() }
        var random = SeededGenerator(seed: StableHash.fnv1a(Data("performance-test:\(scope.environment.rawValue):\(count)".utf8)))
        let requestID = random.uuid().description.lowercased()
        let bodies: [[UInt8]]
        do throws(ForgeError) {
            let payload = try view.rendering.realtimePayload(about: latest).objectValue ?? [:]
            bodies = try RealtimeLoadTest.bodies(of: payload, count: config.totalRequests, seed: random.next()) { (value) throws(ForgeError) in
                try view.rendering.sign(value)
            }
        } catch { throw .generalInternal }
        try changeRetention(scope) { (account) throws(ServerAPIError) in
            // Another request may have started one since the check above.
            guard account.runningTest == nil else { throw .existingPerformanceTestRun }
            account.add(.init(target: url, configuration: config), id: requestID)
        }
        let trust = configuration.deliveries?.webhooks.trustedRootsPEM
        let run = PerformanceTestQueue.Run(
            key: retentionKey(scope), id: requestID, configuration: config,
            requests: bodies.map { WebhookRequest(url: target, body: $0, timeoutSeconds: PerformanceTestConfig.requestTimeoutSeconds, trustedRootsPEM: trust) })
        if !performanceTests.enqueue(run) {
            // Too many tests waiting for the runner: this one ends at once, every request unsent.
            finishPerformanceTest(run, answers: [])
            throw .generalInternalRetryable
        }
        return PerformanceTestResponse(config: config, requestId: requestID)
    }

    /// Records what the runner found of `run`: the outcome of its answers (none: the runner could not send them); a pass
    /// opens the production realtime URL (4030026 before).
    package func finishPerformanceTest(_ run: PerformanceTestQueue.Run, answers: [WebhookAnswer]) {
        var outcome = RealtimeLoadTest.Outcome(answers, thresholdMilliseconds: run.configuration.responseTimeThreshold)
        if answers.isEmpty { outcome.failures[.other] = run.requests.count }
        outcome.total = max(outcome.total, run.requests.count)
        let passed = outcome.successRate >= Double(run.configuration.successRateThreshold)
        // In memory only (no journal, nothing written): never fails.
        _ = try? state.change { $0.retention.finish(run.id, in: run.key, outcome: outcome, passed: passed) }
    }

    func performanceTestResults(_ id: String, scope: Scope) throws(ServerAPIError) -> PerformanceTestResultResponse {
        let id = try Self.identifier(id, else: .invalidRequestID)
        guard let test = retentionAccount(scope).tests[id] else { throw .performanceTestRunNotFound }
        guard let outcome = test.outcome else {
            return PerformanceTestResultResponse(
                config: test.configuration, target: test.target, result: "PENDING", successRate: nil, numPending: test.configuration.totalRequests,
                responseTimes: nil, failures: nil)
        }
        let rate = outcome.successRate
        return PerformanceTestResultResponse(
            config: test.configuration, target: test.target, result: rate >= Double(test.configuration.successRateThreshold) ? "PASS" : "FAIL",
            successRate: Int(rate.rounded(.down)), numPending: 0,
            responseTimes: PerformanceTestResponseTimes(
                average: outcome.average, p50: outcome.percentile(500), p90: outcome.percentile(900), p95: outcome.percentile(950),
                p99: outcome.percentile(990)),
            failures: FailureCounts(outcome.orderedFailures.map { ($0.result.rawValue, $0.count) }))
    }
}

/// The performance tests a server has to run, handed from the answer pool (``ServerAPIService/initiatePerformanceTest(body:scope:now:)``)
/// to the HTTP layer's runner, which sends them and calls ``ServerAPIService/finishPerformanceTest(_:answers:)``. Bounded:
/// at most ``capacity`` wait (one runs at a time per account).
package final class PerformanceTestQueue: Sendable {
    package struct Run: Sendable {
        package var key: RetentionMessagingState.Key
        package var id: String
        package var configuration: PerformanceTestConfig
        package var requests: [WebhookRequest]
    }

    package static let capacity = RetentionMessagingState.maximumAccounts
    /// Read once, by the runner.
    package let runs: AsyncStream<Run>
    private let continuation: AsyncStream<Run>.Continuation

    package init() { (runs, continuation) = AsyncStream.makeStream(of: Run.self, bufferingPolicy: .bufferingOldest(Self.capacity)) }

    /// Whether `run` was taken (false: ``capacity`` are waiting already).
    func enqueue(_ run: Run) -> Bool {
        if case .enqueued = continuation.yield(run) { return true }
        return false
    }
}
