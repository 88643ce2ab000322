#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ReceiptCorpus
public import _ForgeSupport

/// Harness protocol v1 (DESIGN §6): what the runner and a validator under test say to each other.
/// The same Codable messages travel in process, over stdio as NDJSON and over HTTP. The expected
/// answer is never sent: the harness only sees the receipt and its context.
public enum HarnessProtocol {
    public static let version = 1

    /// Every message's `type`, in both directions.
    public enum MessageType: String, Sendable, CaseIterable {
        case hello, validate, result, errored, stop
    }
}

/// The harness's self-description, its answer to the runner's `hello`.
public struct HarnessHello: Codable, Sendable, Hashable {
    public enum Granularity: String, Codable, Sendable, Hashable, CaseIterable {
        /// Only accept/reject is compared.
        case none
        /// The error class's family (`chain`) must match.
        case coarse
        /// The full error class must match one of the expected ones (or be a descendant).
        case fine
    }

    public var type = HarnessProtocol.MessageType.hello.rawValue
    public var `protocol`: Int
    public var implementation: String
    public var features: [String]
    /// The artefacts the harness judges (`receipt`, `jws`); absent or empty: it declares none, and is given
    /// receipts unless `--artifacts` (or the `jws` feature, an alias) says otherwise. See ``ArtifactSelection``.
    public var artifacts: [ArtifactGroup]?
    public var errorGranularity: Granularity
    /// Whether the harness validates "as of" `context.now`; without it, time-dependent vectors are skipped.
    public var clockInjection: Bool
    public var maxConcurrency: Int

    public init(
        implementation: String, features: [String], artifacts: [ArtifactGroup]? = nil, errorGranularity: Granularity, clockInjection: Bool = true,
        maxConcurrency: Int = 1
    ) {
        self.protocol = HarnessProtocol.version
        self.implementation = implementation
        self.features = features
        self.artifacts = artifacts
        self.errorGranularity = errorGranularity
        self.clockInjection = clockInjection
        self.maxConcurrency = maxConcurrency
    }
}

/// `validate`: one vector's bytes (base64) and its context, numbered by `seq`.
public struct ValidateRequest: Codable, Sendable, Hashable {
    public struct Input: Codable, Sendable, Hashable {
        public var encoding = "base64"
        public var data: String
        public init(data: String) { self.data = data }
    }

    public var type = HarnessProtocol.MessageType.validate.rawValue
    public var seq: Int
    public var id: String
    public var input: Input
    public var context: Context
    /// The vector's bytes, for a validator in the runner's own process that asks for them
    /// (``ReceiptValidator/readsBytes``); its `input.data` is then empty. Never on the wire.
    public var bytes: [UInt8]? = nil

    private enum CodingKeys: String, CodingKey { case type, seq, id, input, context }

    public init(seq: Int, id: String, base64: String, context: Context) {
        self.seq = seq
        self.id = id
        self.input = Input(data: base64)
        self.context = context
    }
}

extension ValidateRequest {
    /// The message as one line of compact JSON, the same members `JSONEncoder` writes but several times faster
    /// (a receipt's base64 is copied, not escaped character by character): every transport sends this.
    public var jsonLine: Data { Data(jsonLineBytes) }

    /// The message's JSON, written once into a buffer sized for it: the base64 of the corpus's largest vectors
    /// is nearly 2 MB, which a growing `String` copied several times over (with a page fault per fresh page).
    /// The same bytes as ``message``'s compact serialization (`JSONLineTests` checks every vector).
    public var jsonLineBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(input.data.utf8.count + id.utf8.count + 512)
        out += #"{"type":"#.utf8
        JSONValue.appendQuoted(type, to: &out)
        out += #","seq":"#.utf8
        out += String(seq).utf8
        out += #","id":"#.utf8
        JSONValue.appendQuoted(id, to: &out)
        out += #","input":{"encoding":"#.utf8
        JSONValue.appendQuoted(input.encoding, to: &out)
        out += #","data":"#.utf8
        JSONValue.appendQuoted(input.data, to: &out)
        out += #"},"context":"#.utf8
        out += JSONValue.object(contextObject).serialized(pretty: false).utf8
        out += "}".utf8
        return out
    }

    /// The message as a JSON value (what ``jsonLineBytes`` writes, member for member).
    public var message: JSONValue {
        .object([
            ("type", .string(type)), ("seq", .integer(Int64(seq))), ("id", .string(id)),
            ("input", .object([("encoding", .string(input.encoding)), ("data", .string(input.data))])), ("context", .object(contextObject)),
        ])
    }

    private var contextObject: JSONObject {
        var context: JSONObject = [("now", .string(self.context.now)), ("trustAnchor", .string(self.context.trustAnchor))]
        for (key, value) in [
            ("bundleId", self.context.bundleId), ("appVersion", self.context.appVersion), ("deviceId", self.context.deviceId),
            ("environment", self.context.wireEnvironment), ("artifact", self.context.artifact?.rawValue),
        ] {
            if let value { context.append((key, .string(value))) }
        }
        if let appAppleId = self.context.appAppleId { context.append(("appAppleId", .integer(appAppleId))) }
        if let ocsp = self.context.ocsp {
            context.append(("ocsp", .object([("responder", .string(ocsp.responder)), ("leaf", .string(ocsp.leaf)), ("intermediate", .string(ocsp.intermediate))])))
        }
        return context
    }
}

/// The harness's answer to one `validate`.
public enum HarnessReply: Codable, Sendable, Hashable {
    public enum Verdict: String, Codable, Sendable, Hashable { case accept, reject }

    /// How a transport saw the harness fail, beyond what the harness itself reported.
    public enum Failure: String, Codable, Sendable, Hashable { case timeout, crash }

    case result(seq: Int, verdict: Verdict, errorClass: String?, message: String?, decoded: DecodedReceipt?)
    case skipped(seq: Int, reason: String)
    case errored(seq: Int, message: String)
    /// Set by a transport, never sent by a harness: written as `errored` on the wire.
    case failed(seq: Int, failure: Failure, message: String)

    public var seq: Int {
        switch self {
        case .result(let seq, _, _, _, _), .skipped(let seq, _), .errored(let seq, _), .failed(let seq, _, _): seq
        }
    }

    private enum Keys: String, CodingKey { case type, seq, verdict, errorClass, message, decoded, reason }

    /// A reply from its JSON, as `JSONDecoder` reads it. The transports read one reply per vector, and
    /// `JSONDecoder` cost about 20 µs for `{"verdict":"accept","seq":1,"type":"result"}` (8 % of the runner over
    /// HTTP). A reply made only of the plain members is read from ``JSONValue``; anything else (`decoded`, a number
    /// that is not a plain integer, a wrong type) goes to `JSONDecoder`, so the answer and the error are its own.
    public init(json bytes: Data) throws {
        if let plain = Self.plain(bytes) {
            self = plain
        } else {
            self = try JSONDecoder().decode(HarnessReply.self, from: bytes)
        }
    }

    private static func plain(_ bytes: Data) -> HarnessReply? {
        guard let value = try? JSONValue(parsingUniqueKeys: bytes), case .object(let object) = value, object["decoded"] == nil,
            case .integer(let number)? = object["seq"], let seq = Int(exactly: number), case .string(let type)? = object["type"]
        else { return nil }
        /// An optional string: absent or null is nil; anything but a string is for JSONDecoder to refuse.
        func optional(_ key: String) -> String?? {
            switch object[key] {
            case nil, .null?: .some(nil)
            case .string(let text)?: .some(text)
            default: nil
            }
        }
        switch type {
        case HarnessProtocol.MessageType.result.rawValue:
            guard case .string(let raw)? = object["verdict"], let verdict = Verdict(rawValue: raw), let errorClass = optional("errorClass"),
                let message = optional("message")
            else { return nil }
            return .result(seq: seq, verdict: verdict, errorClass: errorClass, message: message, decoded: nil)
        case "skipped":
            guard case .string(let reason)? = object["reason"] else { return nil }
            return .skipped(seq: seq, reason: reason)
        case HarnessProtocol.MessageType.errored.rawValue:
            guard case .string(let message)? = object["message"] else { return nil }
            return .errored(seq: seq, message: message)
        default:
            return nil
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let seq = try container.decode(Int.self, forKey: .seq)
        switch try container.decode(String.self, forKey: .type) {
        case HarnessProtocol.MessageType.result.rawValue:
            self = .result(
                seq: seq, verdict: try container.decode(Verdict.self, forKey: .verdict),
                errorClass: try container.decodeIfPresent(String.self, forKey: .errorClass),
                message: try container.decodeIfPresent(String.self, forKey: .message),
                decoded: try container.decodeIfPresent(DecodedReceipt.self, forKey: .decoded))
        case "skipped":
            self = .skipped(seq: seq, reason: try container.decode(String.self, forKey: .reason))
        case HarnessProtocol.MessageType.errored.rawValue:
            self = .errored(seq: seq, message: try container.decode(String.self, forKey: .message))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown reply type '\(other)'; expected result, skipped or errored")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(seq, forKey: .seq)
        switch self {
        case .result(_, let verdict, let errorClass, let message, let decoded):
            try container.encode(HarnessProtocol.MessageType.result.rawValue, forKey: .type)
            try container.encode(verdict, forKey: .verdict)
            try container.encodeIfPresent(errorClass, forKey: .errorClass)
            try container.encodeIfPresent(message, forKey: .message)
            try container.encodeIfPresent(decoded, forKey: .decoded)
        case .skipped(_, let reason):
            try container.encode("skipped", forKey: .type)
            try container.encode(reason, forKey: .reason)
        case .errored(_, let message), .failed(_, _, let message):
            try container.encode(HarnessProtocol.MessageType.errored.rawValue, forKey: .type)
            try container.encode(message, forKey: .message)
        }
    }
}

/// A validator run in process: the `swift:` transport. Implement this to run the suite against your
/// own Swift validator (see `ConformanceRunner`).
public protocol ReceiptValidator: Sendable {
    /// The handshake; throwing here is an infrastructure failure (exit 2), reported with the error's description.
    func hello() async throws -> HarnessHello
    func validate(_ request: ValidateRequest) async -> HarnessReply
    /// True for a validator in the runner's process that reads ``ValidateRequest/bytes``: the runner hands it each
    /// vector's bytes as they are instead of base64 it would decode again (a sixth of an in-process run's time).
    var readsBytes: Bool { get }
}

extension ReceiptValidator {
    /// Validators behind a transport read `input.data`, as the wire carries it.
    public var readsBytes: Bool { false }
}
