#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import _ForgeSupport

/// Reads and writes `manifest.json` in its one canonical form, so regenerating the corpus diffs cleanly.
public enum ManifestIO {
    /// The manifest's file name inside the vectors directory.
    public static let fileName = "manifest.json"

    /// Canonical JSON: pretty-printed, sorted keys, "/" not escaped, trailing newline. Same value ⇒ same bytes.
    public static func encode(_ manifest: Manifest) throws -> Data {
        try CanonicalJSON.encode(manifest)
    }

    /// Decodes a manifest; a mismatch with the model is `.invalidManifest` naming the key path and, inside a
    /// vector, the vector's id (a path's index alone makes the reader count).
    public static func decode(_ data: Data) throws(CorpusError) -> Manifest {
        do {
            return try JSONDecoder().decode(Manifest.self, from: data)
        } catch let error as DecodingError {
            let vector = vectorID(at: path(of: error), in: data).map { "vector \($0) " } ?? ""
            throw CorpusError(.invalidManifest, "invalid manifest: \(vector)\(describe(error))")
        } catch {
            throw CorpusError(.invalidManifest, "invalid manifest: \(error)")
        }
    }

    /// Reads and decodes `<vectorsDirectory>/manifest.json`.
    public static func load(from vectorsDirectory: URL) throws(CorpusError) -> Manifest {
        let file = vectorsDirectory.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw CorpusError(.notFound, "no \(fileName) in \(vectorsDirectory.path)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw CorpusError(.io, "cannot read \(file.path)")
        }
        return try decode(data)
    }

    /// The id of the vector a coding path runs through (`vectors[12]…`), read from the raw JSON: the vector did not
    /// decode, so only the text has it.
    private static func vectorID(at path: [any CodingKey], in data: Data) -> String? {
        guard path.count > 1, path[0].stringValue == "vectors", let index = path[1].intValue,
            let vectors = (try? JSONValue(parsing: data))?["vectors"]?.arrayValue, vectors.indices.contains(index)
        else { return nil }
        return vectors[index]["id"]?.stringValue
    }

    /// Where the decoder was when it failed.
    private static func path(of error: DecodingError) -> [any CodingKey] {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): context.codingPath
        case .keyNotFound(_, let context): context.codingPath
        @unknown default: []
        }
    }

    /// "at <path>: <reason>".
    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "at \(context.codingPath.keyPathText): \(reason(context))"
        case .keyNotFound(let key, let context):
            return "at \((context.codingPath + [key]).keyPathText): missing required key"
        @unknown default:
            return "\(error)"
        }
    }

    private static func reason(_ context: DecodingError.Context) -> String {
        guard let underlying = context.underlyingError else { return context.debugDescription }
        return "\(context.debugDescription) (\(underlying))"
    }
}

/// The one JSON form this library writes: pretty, sorted keys, unescaped "/", trailing newline.
enum CanonicalJSON {
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(value)
        data.append(0x0A)
        return data
    }
}

extension Array where Element == any CodingKey {
    /// The path as a reader writes it: `vectors[0].context.now`, or "(root)" when empty.
    var keyPathText: String {
        guard !isEmpty else { return "(root)" }
        var text = ""
        for key in self {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }
}
