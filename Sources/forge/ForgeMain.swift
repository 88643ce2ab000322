import ForgeCLI
import _ForgeSupport
import StoreModel

/// `forge`: everything but HTTP, which it hands over to `forge-http` (see `NetworkSupport`).
@main
enum ForgeMain {
    static func main() async { await ForgeCLI.main() }
}
