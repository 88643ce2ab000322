#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import ReceiptCorpus
public import _ForgeSupport

/// Adapts an HTTP endpoint that does not speak the harness protocol — Apple's `verifyReceipt`, or a
/// production validator that cannot be changed — so it can be judged without writing a harness.
///
/// A mapping file (`forge run --target https://… --mapping FILE`) says how to build the request from
/// a vector and how to read a verdict out of the JSON answer:
///
/// ```json
/// {
///   "mappingVersion": 1, "name": "acme",
///   "request": {"path": "/v1/receipts/validate", "headers": {"Authorization": "Bearer {{env:ACME_TOKEN}}"},
///               "body": {"receipt": "{{receipt}}", "bundle": "{{bundleId}}"}},
///   "response": {"verdict": "/result/status", "accept": ["ok"], "reject": {"invalid": "", "expired": "policy"},
///                "errorClass": "/result/reason", "message": "/result/detail"},
///   "granularity": "coarse"
/// }
/// ```
///
/// Placeholders: `{{receipt}}` (base64), `{{id}}`, `{{now}}`, `{{trustAnchor}}`, `{{bundleId}}`,
/// `{{appVersion}}`, `{{deviceId}}`, `{{environment}}`, `{{password}}` (`--shared-secret`) and
/// `{{env:NAME}}`. A member or header whose whole value is a placeholder with no value is left out.
/// Optional: `granularity` (none unless said), `features` (all unless listed), `artifacts` (`["receipt"]`
/// unless listed, e.g. `["jws"]` for a StoreKit 2 endpoint), `clockInjection`
/// (whether the endpoint judges at `{{now}}`; by default, whether the request sends it).
/// `response.verdict` is a JSON pointer into the answer, or `@status` for the HTTP status code; its
/// value (numbers as written, e.g. `21003`) is looked up in `accept` and `reject` (value → error
/// class, "" for none); any other value is an error of the endpoint, never a verdict.
public struct ResponseMapping: Codable, Sendable, Hashable {
    public struct Request: Codable, Sendable, Hashable {
        /// Appended to the target URL.
        public var path: String?
        public var headers: [String: String]?
        public var body: JSONValue

        /// The strings that may hold placeholders: path, header values, and the body's strings.
        var templates: [String] { [path ?? ""] + (headers.map { Array($0.values) } ?? []) + body.strings }
    }

    public struct Response: Codable, Sendable, Hashable {
        public var verdict: String
        public var accept: [String]
        public var reject: [String: String]
        /// A pointer to a finer error class than the `reject` table gives; wins when present.
        public var errorClass: String?
        public var message: String?
    }

    public var mappingVersion = 1
    public var name: String
    public var request: Request
    public var response: Response
    /// How finely the endpoint's reasons can be graded; `none` unless the mapping says otherwise.
    public var granularity: HarnessHello.Granularity?
    /// Features the endpoint supports; absent means every feature of the corpus.
    public var features: [String]?
    /// The artefacts the endpoint judges (`receipt`, `jws`), as a harness's hello declares them; absent: receipts.
    public var artifacts: [ArtifactGroup]?
    /// Whether the endpoint judges at the vector's `now`. Absent: true exactly when the request sends
    /// `{{now}}`; an endpoint on its own clock has the time-dependent vectors skipped.
    public var clockInjection: Bool?

    /// `clockInjection`, or whether the request carries `{{now}}` at all.
    public var judgesAtContextTime: Bool {
        clockInjection ?? request.templates.contains { $0.contains("{{now}}") }
    }

    /// Apple's `verifyReceipt`: POST `{"receipt-data", "password"}`, status 0 (and 21006, valid but
    /// expired) accepts; 21002/21003/21004/21007/21008/21010 reject; 21000, 21005, 21009 and 211xx
    /// are the service's own failures. The `X-Forge-*` headers carry the vector's context to
    /// `forge validate --listen`; Apple's servers ignore them.
    public static let verifyReceipt = ResponseMapping(
        name: "verifyreceipt",
        request: Request(
            path: nil,
            headers: [
                "X-Forge-Id": "{{id}}", "X-Forge-Now": "{{now}}", "X-Forge-Trust-Anchor": "{{trustAnchor}}", "X-Forge-Bundle-Id": "{{bundleId}}",
                "X-Forge-App-Version": "{{appVersion}}", "X-Forge-Device-Id": "{{deviceId}}", "X-Forge-Environment": "{{environment}}",
            ],
            body: .object(["receipt-data": .string("{{receipt}}"), "password": .string("{{password}}"), "exclude-old-transactions": .bool(false)])),
        response: Response(
            verdict: "/status", accept: ["0", "21006"],
            reject: [
                "21002": ErrorClass.container, "21003": .signature, "21004": .binding, "21007": .bindingEnvironment, "21008": .bindingEnvironment,
                "21010": .binding,
            ].mapValues(\.rawValue),
            errorClass: nil, message: nil),
        granularity: HarnessHello.Granularity.none, features: nil,
        // Receipts only: StoreKit 2 JWS have no verifyReceipt.
        artifacts: [.receipt])

    public init(
        name: String, request: Request, response: Response, granularity: HarnessHello.Granularity? = nil, features: [String]? = nil,
        clockInjection: Bool? = nil, artifacts: [ArtifactGroup]? = nil
    ) {
        self.name = name
        self.request = request
        self.response = response
        self.granularity = granularity
        self.features = features
        self.artifacts = artifacts
        self.clockInjection = clockInjection
    }

    /// The placeholders a request template may use, besides `{{env:NAME}}`.
    public static let placeholders: Set<String> = ["receipt", "id", "now", "trustAnchor", "bundleId", "appVersion", "deviceId", "environment", "password"]

    /// Reads a mapping file, refusing unknown keys and placeholders (a typo must not silently send
    /// nothing), unknown versions, and verdict values listed both as accept and reject.
    public static func load(_ data: Data) throws(ConformanceError) -> ResponseMapping {
        let mapping: ResponseMapping
        do { mapping = try JSONDecoder().decode(ResponseMapping.self, from: data) } catch {
            throw ConformanceError(.invalidMapping, "not a response mapping: \(error)")
        }
        if let object = (try? JSONValue(parsing: data))?.objectValue {
            let known: [(String, Set<String>)] = [
                ("", ["mappingVersion", "name", "request", "response", "granularity", "features", "artifacts", "clockInjection"]),
                ("request", ["path", "headers", "body"]), ("response", ["verdict", "accept", "reject", "errorClass", "message"]),
            ]
            for (member, keys) in known {
                let level = member.isEmpty ? object : object[member]?.objectValue ?? [:]
                if let unknown = level.keys.sorted().first(where: { !keys.contains($0) }) {
                    throw ConformanceError(.invalidMapping, "unknown key '\(member.isEmpty ? "" : member + ".")\(unknown)'; known: \(keys.sorted().joined(separator: ", "))")
                }
            }
        }
        for template in mapping.request.templates {
            var rest = Substring(template)
            while let open = rest.firstRange(of: "{{"), let close = rest[open.upperBound...].firstRange(of: "}}") {
                let name = String(rest[open.upperBound..<close.lowerBound])
                guard placeholders.contains(name) || (name.hasPrefix("env:") && name.count > 4) else {
                    throw ConformanceError(
                        .invalidMapping, "unknown placeholder {{\(name)}}; known: \(placeholders.sorted().map { "{{\($0)}}" }.joined(separator: ", ")), {{env:NAME}}")
                }
                rest = rest[close.upperBound...]
            }
        }
        guard mapping.mappingVersion == 1 else { throw ConformanceError(.invalidMapping, "mappingVersion \(mapping.mappingVersion) is not supported (1 is)") }
        let both = Set(mapping.response.accept).intersection(mapping.response.reject.keys)
        guard both.isEmpty else { throw ConformanceError(.invalidMapping, "response values both accept and reject: \(both.sorted().joined(separator: ", "))") }
        guard mapping.response.verdict == "@status" || mapping.response.verdict.hasPrefix("/") else {
            throw ConformanceError(.invalidMapping, "response.verdict must be a JSON pointer (\"/status\") or \"@status\", not '\(mapping.response.verdict)'")
        }
        return mapping
    }

    /// The request for one vector: path suffix, headers and JSON body.
    public func request(for message: ValidateRequest, password: String?, environment: [String: String]) -> (path: String, headers: [(String, String)], body: Data) {
        let context = message.context
        let values: [String: String?] = [
            "receipt": message.input.data, "id": message.id, "now": context.now, "trustAnchor": context.trustAnchor, "bundleId": context.bundleId,
            "appVersion": context.appVersion, "deviceId": context.deviceId, "environment": context.wireEnvironment, "password": password,
        ]
        func resolve(_ template: String) -> String? {
            var out = "", rest = Substring(template)
            while let open = rest.firstRange(of: "{{"), let close = rest[open.upperBound...].firstRange(of: "}}") {
                let name = String(rest[open.upperBound..<close.lowerBound])
                let value = name.hasPrefix("env:") ? environment[String(name.dropFirst(4))] : values[name] ?? nil
                if value == nil, rest[..<open.lowerBound].isEmpty, rest[close.upperBound...].isEmpty, out.isEmpty { return nil }
                out += rest[..<open.lowerBound] + (value ?? "")
                rest = rest[close.upperBound...]
            }
            return out + rest
        }
        func fill(_ json: JSONValue) -> JSONValue? {
            switch json {
            case .string(let text): return resolve(text).map(JSONValue.string)
            case .array(let items): return .array(items.map { fill($0) ?? .null })
            case .object(let members): return .object(members.compactMapValues(fill))
            default: return json
            }
        }
        let headers = (request.headers ?? [:]).sorted { $0.key < $1.key }.compactMap { name, value in resolve(value).map { (name, $0) } }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(fill(request.body) ?? .null)) ?? Data("null".utf8)
        return (request.path ?? "", headers, body)
    }

    /// The harness reply an endpoint's answer amounts to.
    public func reply(seq: Int, httpStatus: Int, body: Data) -> HarnessReply {
        let document = try? JSONValue(parsing: body)
        let verdictValue: String?
        if response.verdict == "@status" {
            verdictValue = String(httpStatus)
        } else {
            guard (200..<300).contains(httpStatus) else { return .errored(seq: seq, message: "HTTP \(httpStatus): \(Self.excerpt(body))") }
            guard let document else { return .errored(seq: seq, message: "the answer is not JSON: \(Self.excerpt(body))") }
            verdictValue = document.at(pointer: response.verdict)?.scalarText
        }
        guard let verdictValue else { return .errored(seq: seq, message: "the answer has no \(response.verdict): \(Self.excerpt(body))") }
        let message = response.message.flatMap { document?.at(pointer: $0)?.scalarText }
        if response.accept.contains(verdictValue) {
            return .result(seq: seq, verdict: .accept, errorClass: nil, message: message, decoded: nil)
        }
        guard let tableClass = response.reject[verdictValue] else {
            return .errored(seq: seq, message: "\(response.verdict) = \(verdictValue) is neither accept nor reject in mapping '\(name)': \(Self.excerpt(body))")
        }
        let finer = response.errorClass.flatMap { document?.at(pointer: $0)?.scalarText }
        return .result(
            seq: seq, verdict: .reject, errorClass: finer ?? (tableClass.isEmpty ? nil : tableClass),
            message: message ?? "\(response.verdict) = \(verdictValue)", decoded: nil)
    }

    private static func excerpt(_ body: Data) -> String {
        let text = String(decoding: body.prefix(120), as: UTF8.self).replacing("\n", with: " ")
        return body.count > 120 ? text + "…" : (text.isEmpty ? "(empty body)" : text)
    }
}

extension JSONValue {
    /// Every string inside, keys excluded: where a request template's placeholders are.
    fileprivate var strings: [String] {
        switch self {
        case .string(let text): [text]
        case .array(let items): items.flatMap(\.strings)
        case .object(let members): members.flatMap(\.value.strings)
        case .null, .bool, .integer, .number: []
        }
    }
}
