import _ForgeSupport
import StoreForge
import Testing
import StoreModel

/// Issue 39 item 11: `forge jws make --set POINTER=JSON` is read where the payload is edited, not in the CLI.
@Suite("PayloadAssignment: POINTER=JSON")
struct PayloadAssignmentTests {
    @Test(
        "Splits at the first '=', reads the value as JSON, and makes a bare name the top-level member",
        arguments: [
            ("/data/appAppleId=1234", "/data/appAppleId", JSONValue.number(1234)),
            (#"storefront="FRA""#, "/storefront", .string("FRA")),
            (#"/offerIdentifier="a=b""#, "/offerIdentifier", .string("a=b")),
            ("a/b=null", "/a~1b", .null),
            ("/data={}", "/data", .object([:])),
        ])
    func reads(text: String, pointer: String, value: JSONValue) throws {
        let assignment = try PayloadAssignment(parsing: text)
        #expect(assignment.pointer == pointer && assignment.value == value)
    }

    @Test("Refuses text without '=' or whose value is not JSON, naming it and never a flag", arguments: ["storefront", "storefront=FRA", "/price=", "/price=1 2"])
    func refuses(text: String) {
        #expect {
            try PayloadAssignment(parsing: text)
        } throws: { error in
            guard let error = error as? ForgeError else { return false }
            return error.message.contains("'\(text)'") && error.message.contains("pointer=json") && !error.message.contains("--")
        }
    }

    @Test("A pointer stays as written; a bare name is escaped into one token")
    func pointers() {
        #expect(PayloadAssignment.pointer("/data/status") == "/data/status")
        #expect(PayloadAssignment.pointer("a~b") == "/a~0b")
        #expect(PayloadAssignment.pointer("storefront") == "/storefront")
    }
}
