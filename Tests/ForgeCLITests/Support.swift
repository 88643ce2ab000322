import Foundation
import ForgeTestSupport

/// How many vectors the committed corpus holds, read from its manifest as any tool would.
let corpusCount: Int = {
    let data = (try? Data(contentsOf: Repository.file("Vectors/manifest.json"))) ?? Data()
    return ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["vectors"].flatMap { $0 as? [Any] }?.count ?? 0
}()

/// How many of the committed corpus's vectors are app receipts: what a target declaring no artefacts is judged on.
let corpusReceiptCount: Int = {
    let data = (try? Data(contentsOf: Repository.file("Vectors/manifest.json"))) ?? Data()
    let vectors = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["vectors"] as? [[String: Any]] ?? []
    return vectors.filter { ($0["context"] as? [String: Any])?["artifact"] == nil }.count
}()

/// How many vectors of the committed corpus's `xcode::` family need the `xcode` feature.
let corpusXcodeCount: Int = {
    let data = (try? Data(contentsOf: Repository.file("Vectors/manifest.json"))) ?? Data()
    let vectors = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["vectors"] as? [[String: Any]] ?? []
    return vectors.filter { ($0["id"] as? String)?.hasPrefix("xcode::") == true && ($0["features"] as? [String])?.contains("xcode") == true }.count
}()

/// How many vectors of the committed corpus need `online`: the reference validator does not go online, so it SKIPs them.
let corpusOnlineCount: Int = {
    let data = (try? Data(contentsOf: Repository.file("Vectors/manifest.json"))) ?? Data()
    let vectors = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["vectors"] as? [[String: Any]] ?? []
    return vectors.filter { ($0["features"] as? [String])?.contains("online") == true }.count
}()

/// The outcomes of a validator that agrees with the corpus: PASS, or ACCEPTABLE where the profile leaves the choice open.
let agreeing: Set<String> = ["PASS", "ACCEPTABLE"]

/// Whether a results.json entry agrees with the corpus: an agreeing outcome, or the SKIP of a vector that needs
/// `online` from a harness that does not declare it (the reference validator: it does not go online).
func agrees(_ result: [String: Any]) -> Bool {
    agreeing.contains(result["outcome"] as? String ?? "") || isOfflineSkip(result)
}

/// A SKIP because the harness does not check revocation online.
func isOfflineSkip(_ result: [String: Any]) -> Bool {
    result["outcome"] as? String == "SKIP" && (result["message"] as? String)?.hasSuffix("feature not declared by the harness: online") == true
}

/// A bundled certificate's path, by file name (`root.pem`).
func certificate(_ name: String) -> String { Repository.certificate(name) }
