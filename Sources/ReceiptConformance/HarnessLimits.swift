import _ForgeSupport

/// Every bound the runner puts on a harness, in one place: what a harness may send, what a report keeps of
/// it, and how long the runner waits. A harness is untrusted input; none of these can be exceeded by it.
public enum HarnessLimits {
    /// The largest message a harness may send: a `stdio:` line, an `exec:` reply on stdout, an `http(s)://`
    /// response body (hello and replies alike). A reply is a few hundred bytes; beyond this bound the message
    /// is a protocol violation (ERROR), enforced while reading, so a flood costs at most this much memory.
    public static let maximumMessageBytes = 4 << 20

    /// The most of one vector's message (the harness's own words, a failure's explanation) that results.json,
    /// JUnit, HTML and Markdown keep; the rest is cut, and the cut says how much there was. Bounds a report
    /// by the number of vectors, whatever the harness says.
    public static let maximumRecordedMessageBytes = 4096

    /// The last bytes of a harness's stderr kept for the report of a crash or a timeout.
    public static let stderrTailBytes = 2048

    /// How much of a stray line or of an answer that is not a protocol message a message quotes: characters
    /// of a line, bytes of a body.
    public static let quotedPrefix = 200

    /// Stray protocol violations (lines that answer no request) listed after a `stdio:` run; then "… and more".
    public static let maximumStrayLines = 20

    /// The per-vector time limit (`--timeout`) unless the user sets one: a process per vector starts slower.
    /// For `http(s)://` targets it covers the whole exchange: connect, request, response headers and body.
    public static let defaultProcessTimeoutSeconds = 5.0
    /// The same for `stdio:` and `http(s)://` targets.
    public static let defaultTimeoutSeconds = 2.0
    /// The largest `--timeout` accepted: one day, far beyond any harness and far inside `Duration`'s range.
    public static let maximumTimeoutSeconds = 86_400.0
    /// The least a `stdio:` harness is given to start and say hello, whatever `--timeout` says of a vector: a JVM
    /// or a Python process with heavy imports takes seconds to start, and so does any process on a loaded
    /// machine (seen: a debug `forge validate --harness` missed 2 s during a CI run).
    public static let minimumHelloSeconds = 10.0

    /// How long a `stdio:` harness has to exit after `stop` before its process group is killed.
    public static let stopGrace = Duration.milliseconds(500)
    /// How long an exited `exec:` harness's pipes may stay open (held by a grandchild that left its group).
    public static let pipeDrainGrace = Duration.milliseconds(500)
    /// How long the runner waits for an ending harness's last stderr bytes, so a report can quote them.
    public static let settleGrace = Duration.milliseconds(200)

    /// The message of a harness message over `maximumMessageBytes`: `what` is "a line", "a reply", ….
    public static func overlong(_ what: String) -> String {
        "protocol violation: \(what) longer than \(maximumMessageBytes) bytes"
    }

    /// `text` as a report keeps it: whole when it fits `maximumRecordedMessageBytes` of UTF-8, else cut at a
    /// character boundary, with a note of how long it was.
    public static func recorded(_ text: String) -> String { text.cut(atUTF8: maximumRecordedMessageBytes) }

    /// A time limit in seconds as a `Duration`, clamped to [1 ms, `maximumTimeoutSeconds`] (NaN is the
    /// maximum): the CLI refuses values outside (0, maximum] before they get here.
    public static func timeout(seconds: Double) -> Duration {
        let clamped = seconds.isNaN ? maximumTimeoutSeconds : min(max(seconds, 0.001), maximumTimeoutSeconds)
        // Exact: at most 86 400 000 ms, well inside Int64.
        return .milliseconds(Int64((clamped * 1000).rounded(.up)))
    }
}
