package import _ForgeSupport

/// The App Store Server API's errors as `forge serve` sends them: Apple's `errorCode`, its `errorMessage`,
/// and the HTTP status of its family (server-api-facts §1.2: 400 for 4000xxx, 403 for 4030xxx, 404 for
/// 4040xxx, 409 for 4090xxx (Retention Messaging's "already exists"), 429 for 4290000, 500 for 50000xx). The codes are Apple's `APIError` values (identical in the
/// Python, Node and Swift clients). The one place they are named: routes throw these, nothing else.
package enum ServerAPIError: Int64, Sendable, Hashable, CaseIterable, Error {
    case generalBadRequest = 4_000_000
    case invalidRequestRevision = 4_000_005
    case invalidTransactionID = 4_000_006
    case invalidOriginalTransactionID = 4_000_008
    case invalidExtendByDays = 4_000_009
    case invalidExtendReasonCode = 4_000_010
    case invalidRequestIdentifier = 4_000_011
    case startDateTooFarInPast = 4_000_012
    case startDateAfterEndDate = 4_000_013
    case invalidPaginationToken = 4_000_014
    case invalidStartDate = 4_000_015
    case invalidEndDate = 4_000_016
    case paginationTokenExpired = 4_000_017
    case invalidNotificationType = 4_000_018
    case multipleFiltersSupplied = 4_000_019
    case invalidTestNotificationToken = 4_000_020
    case invalidSort = 4_000_021
    case invalidProductType = 4_000_022
    case invalidProductID = 4_000_023
    case invalidSubscriptionGroupIdentifier = 4_000_024
    case invalidInAppOwnershipType = 4_000_026
    case invalidEmptyStorefrontCountryCodeList = 4_000_027
    case invalidStorefrontCountryCode = 4_000_028
    case invalidRevoked = 4_000_030
    case invalidStatus = 4_000_031
    case invalidAccountTenure = 4_000_032
    case invalidAppAccountToken = 4_000_033
    case invalidConsumptionStatus = 4_000_034
    case invalidCustomerConsented = 4_000_035
    case invalidDeliveryStatus = 4_000_036
    case invalidLifetimeDollarsPurchased = 4_000_037
    case invalidLifetimeDollarsRefunded = 4_000_038
    case invalidPlatform = 4_000_039
    case invalidPlayTime = 4_000_040
    case invalidSampleContentProvided = 4_000_041
    case invalidUserStatus = 4_000_042
    case invalidAppAccountTokenUUID = 4_000_183
    case familyTransactionNotSupported = 4_000_185
    case transactionIDIsNotOriginalTransactionID = 4_000_187
    // Retention Messaging's (Apple's `APIError`, server-api-facts §6).
    case invalidImage = 4_000_161
    case headerTooLong = 4_000_162
    case bodyTooLong = 4_000_163
    case invalidLocale = 4_000_164
    case altTextTooLong = 4_000_175
    case invalidPerformanceTestRequest = 4_000_211
    case invalidRequestID = 4_000_212
    case existingPerformanceTestRun = 4_000_213
    case badRequestRealtimeURL = 4_000_215
    case badRequestImageSize = 4_000_216
    case tooManyBulletPoints = 4_000_218
    case bulletPointTextTooLong = 4_000_219
    case aboveImageRequiresAnImage = 4_000_224
    case subscriptionExtensionIneligible = 4_030_004
    case subscriptionMaxExtension = 4_030_005
    case maximumNumberOfImagesReached = 4_030_014
    case maximumNumberOfMessagesReached = 4_030_016
    case messageNotApproved = 4_030_017
    case imageNotApproved = 4_030_018
    case imageInUse = 4_030_019
    case forbiddenNoPassingTest = 4_030_026
    case appNotFound = 4_040_003
    case originalTransactionIDNotFound = 4_040_005
    case serverNotificationURLNotFound = 4_040_007
    case testNotificationNotFound = 4_040_008
    case statusRequestNotFound = 4_040_009
    case transactionIDNotFound = 4_040_010
    case imageNotFound = 4_040_014
    case messageNotFound = 4_040_015
    case performanceTestRunNotFound = 4_040_018
    case defaultMessageNotFound = 4_040_020
    case realtimeURLNotFound = 4_040_021
    case imageAlreadyExists = 4_090_000
    case messageAlreadyExists = 4_090_001
    case rateLimitExceeded = 4_290_000
    case generalInternal = 5_000_000
    case generalInternalRetryable = 5_000_001

    package var code: Int64 { rawValue }

    /// Apple's `errorMessage`. Attested in Apple's own samples: 4000006 "Invalid transaction id." and 4040010
    /// "Transaction id not found."; the others are worded the same way from the error's documentation page.
    package var message: String {
        switch self {
        case .generalBadRequest: "Bad request."
        case .invalidRequestRevision: "Invalid request revision."
        case .invalidTransactionID: "Invalid transaction id."
        case .invalidOriginalTransactionID: "Invalid original transaction id."
        case .invalidExtendByDays: "Invalid extend by days value."
        case .invalidExtendReasonCode: "Invalid extend reason code."
        case .invalidRequestIdentifier: "Invalid request identifier."
        case .startDateTooFarInPast: "Start date too far in past."
        case .startDateAfterEndDate: "Start date after end date."
        case .invalidPaginationToken: "Invalid pagination token."
        case .invalidStartDate: "Invalid start date."
        case .invalidEndDate: "Invalid end date."
        case .paginationTokenExpired: "Pagination token expired."
        case .invalidNotificationType: "Invalid notification type."
        case .multipleFiltersSupplied: "Multiple filters supplied."
        case .invalidTestNotificationToken: "Invalid test notification token."
        case .invalidEmptyStorefrontCountryCodeList: "Invalid empty storefront country code list."
        case .invalidStorefrontCountryCode: "Invalid storefront country code."
        case .invalidSort: "Invalid sort."
        case .invalidProductType: "Invalid product type."
        case .invalidProductID: "Invalid product id."
        case .invalidSubscriptionGroupIdentifier: "Invalid subscription group identifier."
        case .invalidInAppOwnershipType: "Invalid in-app ownership type."
        case .invalidRevoked: "Invalid revoked."
        case .invalidStatus: "Invalid status."
        case .invalidAccountTenure: "Invalid account tenure."
        case .invalidAppAccountToken: "Invalid app account token."
        case .invalidConsumptionStatus: "Invalid consumption status."
        case .invalidCustomerConsented: "Invalid customer consented."
        case .invalidDeliveryStatus: "Invalid delivery status."
        case .invalidLifetimeDollarsPurchased: "Invalid lifetime dollars purchased."
        case .invalidLifetimeDollarsRefunded: "Invalid lifetime dollars refunded."
        case .invalidPlatform: "Invalid platform."
        case .invalidPlayTime: "Invalid play time."
        case .invalidSampleContentProvided: "Invalid sample content provided."
        case .invalidUserStatus: "Invalid user status."
        case .invalidAppAccountTokenUUID: "Invalid app account token UUID."
        case .familyTransactionNotSupported: "Family transaction not supported."
        case .transactionIDIsNotOriginalTransactionID: "Transaction id is not original transaction id."
        case .invalidImage: "Invalid image."
        case .headerTooLong: "Header too long."
        case .bodyTooLong: "Body too long."
        case .invalidLocale: "Invalid locale."
        case .altTextTooLong: "Alt text too long."
        case .invalidPerformanceTestRequest: "Invalid performance test request."
        case .invalidRequestID: "Invalid request id."
        case .existingPerformanceTestRun: "Existing performance test run."
        case .badRequestRealtimeURL: "Invalid realtime URL."
        case .badRequestImageSize: "Invalid image size."
        case .tooManyBulletPoints: "Too many bullet points."
        case .bulletPointTextTooLong: "Bullet point text too long."
        case .aboveImageRequiresAnImage: "Header above image requires an image."
        case .maximumNumberOfImagesReached: "Maximum number of images reached."
        case .maximumNumberOfMessagesReached: "Maximum number of messages reached."
        case .messageNotApproved: "Message not approved."
        case .imageNotApproved: "Image not approved."
        case .imageInUse: "Image in use."
        case .forbiddenNoPassingTest: "A passing performance test is required."
        case .imageNotFound: "Image not found."
        case .messageNotFound: "Message not found."
        case .performanceTestRunNotFound: "Performance test run not found."
        case .defaultMessageNotFound: "Default message not found."
        case .realtimeURLNotFound: "Realtime URL not found."
        case .imageAlreadyExists: "Image already exists."
        case .messageAlreadyExists: "Message already exists."
        case .subscriptionExtensionIneligible: "Subscription extension ineligible."
        case .subscriptionMaxExtension: "Subscription max extension."
        case .appNotFound: "App not found."
        case .originalTransactionIDNotFound: "Original transaction id not found."
        case .serverNotificationURLNotFound: "Server notification URL not found."
        case .testNotificationNotFound: "Test notification not found."
        case .statusRequestNotFound: "Status request not found."
        case .transactionIDNotFound: "Transaction id not found."
        case .rateLimitExceeded: "Rate limit exceeded."
        case .generalInternal: "An unknown error occurred."
        case .generalInternalRetryable: "An unknown error occurred. Please try again."
        }
    }

    /// The HTTP status of the code's family.
    package var httpStatus: Int {
        switch rawValue / 10_000 {
        case 400: 400
        case 403: 403
        case 404: 404
        case 409: 409
        case 429: 429
        default: 500
        }
    }

    /// `{"errorCode":N,"errorMessage":"…"}`, nothing else: Apple's clients need both members.
    package var body: JSONValue { .object([("errorCode", .integer(code)), ("errorMessage", .string(message))]) }
}
