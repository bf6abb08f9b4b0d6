import Foundation
import Testing
@testable import Weather

/// A provider's `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date; anything else is unreadable (nil),
/// and `WeatherService` then holds calls for `breakerCooldown`.
@Suite struct RetryAfterTests {
    @Test func deltaSeconds() {
        #expect(ProviderHTTP.retryAfterSeconds("60") == 60)
        #expect(ProviderHTTP.retryAfterSeconds(" 120 ") == 120)
        #expect(ProviderHTTP.retryAfterSeconds("0") == 0)
        #expect(ProviderHTTP.retryAfterSeconds("9999999999") == 9_999_999_999)
    }

    @Test func unreadable() {
        for value in ["", "-1", "1.5", "soon", "60s", "99999999999", String(repeating: "9", count: 400), "Wed, 32 Nov 2026 10:00:00 GMT"] {
            #expect(ProviderHTTP.retryAfterSeconds(value) == nil, "\(value.prefix(40))")
        }
    }

    @Test func httpDate() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let ahead = try #require(ProviderHTTP.retryAfterSeconds(formatter.string(from: Date().addingTimeInterval(90))))
        #expect((80...91).contains(ahead))
        #expect(ProviderHTTP.retryAfterSeconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0, "a date in the past: now")
    }
}
