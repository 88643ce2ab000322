import _ForgeSupport

/// Apple's `RealtimeResponseBody` (Retention Messaging): what a Get Retention Message endpoint answers a realtime
/// request with, as `forge bench realtime` judges a webhook's answer.
package enum RealtimeResponse {
    /// The answers a body may give, exactly one of them.
    package static let answers = ["message", "alternateProduct", "promotionalOffer"]

    /// Whether `body` (the start of a webhook's answer) is one: a JSON object with exactly one of ``answers``, an object.
    package static func accepts(_ body: [UInt8]) -> Bool {
        guard let value = try? JSONValue(parsing: body), value.objectValue != nil else { return false }
        return answers.count { value[$0]?.objectValue != nil } == 1
    }
}
