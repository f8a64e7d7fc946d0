import Foundation
import SessionTimeline
import Testing

@testable import SessionKit

/// The parts of the HTTP transport that judge what a server sends (issue 22, items 6, 7 and 12).
@Suite("What a hostile server sends")
struct HostileServerTests {
    @Test(
        "Retry-After is delta-seconds (digits) or an HTTP-date; anything else is ignored",
        arguments: [
            ("0", 0.0), ("7", 7), (" 12 ", 12), ("99999999999999999999999", 999_999_999),
            ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ] as [(String, Double?)]
            + ["-inf", "inf", "-1e300", "1e300", "nan", "-1", "0.1", "1e3", "0x10", "+5", "", "soon"].map { ($0, nil) }
    )
    func retryAfter(value: String, seconds: Double?) {
        #expect(HTTPTransport.retryAfterSeconds(value) == seconds)
    }

    @Test("An HTTP-date in the future is the time until it")
    func retryAfterDate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let text = formatter.string(from: now.addingTimeInterval(20))
        #expect(HTTPTransport.retryAfterSeconds(text, now: now) == 20)
    }

    @Test(
        "The wait between tries stays within 0…maximumDelay whatever the numbers",
        arguments: [
            (RetryPolicy(), 1, nil, 0.5), (RetryPolicy(), 2, nil, 1), (RetryPolicy(), 1, 999_999_999, 30),
            (RetryPolicy(), 1, -5, 0), (RetryPolicy(), 1, .infinity, 30), (RetryPolicy(), 1, .nan, 0),
            (RetryPolicy(), 1_000, nil, 30),
            (RetryPolicy(initialDelay: .infinity, maximumDelay: .infinity), 1, nil, 3_600),
            (RetryPolicy(initialDelay: .nan), 1, nil, 0),
        ] as [(RetryPolicy, Int, Double?, Double)]
    )
    func delay(policy: RetryPolicy, attempt: Int, retryAfter: Double?, expected: Double) {
        #expect(policy.delay(after: attempt, retryAfter: retryAfter) == expected)
    }

    @Test(
        "Origins: scheme, host and port, with the scheme's default port",
        arguments: [
            ("http://a:80/x", "http://A/y", true), ("https://a/x", "https://a:443/z", true),
            ("http://a:1/x", "http://a:2/x", false), ("http://a/x", "https://a/x", false),
            ("http://a/x", "http://b/x", false),
        ]
    )
    func origins(a: String, b: String, same: Bool) {
        #expect(HTTPTransport.sameOrigin(URL(string: a)!, URL(string: b)!) == same)
    }

    @Test("A URL in a message has no user name, password, query or fragment")
    func redaction() {
        #expect(redacted(URL(string: "https://u:p@h.example:8443/a/b?key=k#f")!) == "https://h.example:8443/a/b")
        #expect(redacted(URL(string: "http://h/")!) == "http://h/")
    }

    @Test("Server text is one printable line, cut to a few hundred characters")
    func serverText() {
        #expect(
            HTTPTransport.errorText(Data(#"{"error": {"message": "a\u001b[2J\nb"}}"#.utf8)) == #"a\u{1b}[2J b"#
        )
        let huge = HTTPTransport.errorText(Data(String(repeating: "y", count: 5_000_000).utf8))
        #expect(huge.count == 201 && huge.hasSuffix("…"))
        let message = HTTPTransport.errorText(
            Data(#"{"message": "\#(String(repeating: "z ", count: 2_000))"}"#.utf8)
        )
        #expect(message.count <= 301 && message.hasSuffix("…"))
    }

    @Test(
        "Header lines: blank lines and comments skipped; a bad line is named by number, never shown",
        arguments: [
            ("A: 1\r\n\n# c\nB:2", nil),
            ("A: 1\nsecret-without-colon", "S line 2: a header is 'Name: value', and this one has no colon"),
            ("A: 1\nBad Name: secret", "S line 2: the header name \"Bad Name\" has characters"),
            ("A: secret\u{0}", "S line 1: the value of header A holds a control character"),
        ] as [(String, String?)]
    )
    func headerLines(text: String, problem: String?) {
        do {
            let headers = try ProviderSettings.headers(lines: text, source: "S")
            #expect(problem == nil)
            #expect(headers.map(\.name) == ["A", "B"] && headers.map(\.value) == ["1", "2"])
        } catch {
            #expect("\(error)".hasPrefix(problem ?? "no error"), "\(error)")
            #expect(!"\(error)".contains("secret"))
        }
    }
}
