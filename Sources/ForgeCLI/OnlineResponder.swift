import ReceiptConformance
import ReceiptCorpus

/// The OCSP responder the certificates of `online` vectors name (127.0.0.1:6960), for the length of a `forge run`:
/// `forge-http serve --ocsp` as a child, answering every vector at once from the answer its certificates' URLs name
/// (a small request log: nobody reads it during a run), stopping when its stdin ends, so a `forge run` killed by
/// SIGKILL does not leave it holding the port. The port is fixed, as the committed certificates name it: when
/// it is taken, the run says so and exits 2 (``RunResults/notJudged``).
enum OnlineResponder {
    static var service: FeatureService {
        let name = "the OCSP responder on 127.0.0.1:\(OCSPContext.port)"
        guard let helper = Network.helperPath() else {
            return FeatureService(feature: .online, name: name) {
                throw Unavailable(description: "it is served by forge-http, which is not built: run `swift build --product forge-http`")
            }
        }
        let responder = FeatureService.process(
            feature: .online, name: name,
            command: [helper, "serve", "--listen", "127.0.0.1:\(OCSPContext.port)", "--ocsp", "--log-capacity", "16", "--stop-at-stdin-eof"])
        return FeatureService(feature: .online, name: name) {
            do { return try await responder.start() } catch {
                // forge serve's advice (another port, or port 0) is not open to a run: the certificates name this one.
                guard "\(error)".contains("address already in use") else { throw error }
                throw Unavailable(
                    description: "127.0.0.1:\(OCSPContext.port) is in use by another process (a second online run at once?); the online "
                        + "vectors' certificates name this port: free it and run again")
            }
        }
    }

    struct Unavailable: Error, CustomStringConvertible { let description: String }
}
