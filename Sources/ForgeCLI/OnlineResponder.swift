import ReceiptConformance
import ReceiptCorpus

/// The OCSP responder the certificates of `online` vectors name (127.0.0.1:46960), for the length of a `forge run`:
/// `forge-http serve --ocsp` as a child, answering every vector at once from the answer its certificates' URLs name
/// (a small request log: nobody reads it during a run).
enum OnlineResponder {
    static var service: FeatureService {
        let name = "the OCSP responder on 127.0.0.1:\(OCSPContext.port)"
        guard let helper = Network.helperPath() else {
            return FeatureService(feature: .online, name: name) {
                throw Unavailable(description: "it is served by forge-http, which is not built: run `swift build --product forge-http`")
            }
        }
        return .process(
            feature: .online, name: name,
            command: [helper, "serve", "--listen", "127.0.0.1:\(OCSPContext.port)", "--ocsp", "--log-capacity", "16"])
    }

    struct Unavailable: Error, CustomStringConvertible { let description: String }
}
