// swift-tools-version:6.0
import PackageDescription

// An exit-code harness around vapor/jwt-kit's X5CVerifier, used the way its documentation shows for App
// Store JWS: the vector's anchor as the root, the chain checked at the payload's signedDate, then the app's
// own claim checks (bundleId, environment). Built by scripts/known-results.sh into its folder.
let package = Package(
    name: "jwtkit-harness",
    platforms: [.macOS(.v13)],
    dependencies: [.package(url: "https://github.com/vapor/jwt-kit.git", exact: "5.8.0")],
    targets: [.executableTarget(name: "jwtkit-harness", dependencies: [.product(name: "JWTKit", package: "jwt-kit")])]
)
