import Foundation
import Testing
import Vocabulary
import WeatherboardAPI

/// `JSONWriter` is the only encoding of the hot wire types: what it writes must be JSON that the wire types'
/// own `Decodable` reads back to the same value (written again, the same bytes), with the contract's keys.
@Suite("JSONWriter")
struct JSONWriterTests {
    static let tricky = "quote \" backslash \\ newline \n tab \t cr \r bell \u{7} nul \u{0} 한글 🌧️ </script>"

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let c = try decoder.singleValueContainer()
            guard let date = RFC3339.parse(try c.decode(String.self)) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "not RFC 3339")
            }
            return date
        }
        return decoder
    }()

    static let weather = CurrentWeather(
        regionId: "1835848", weatherType: .rain, description: "비", temperature: 12.5, feelsLike: 11, humidity: 80, pressure: 1013.2,
        windSpeed: 3.4, uvIndex: nil, cloudiness: 90, observedAt: Date(timeIntervalSince1970: 1_795_000_000),
        fetchedAt: Date(timeIntervalSince1970: 1_795_000_060), provider: "open-meteo", stale: false, units: .metric
    )

    static let media = MediaResponse(
        id: "9", url: "https://example.test/media/a.jpg", previewUrl: "https://example.test/media/a-preview.jpg", width: 2048, height: 1536,
        blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj", alt: tricky, contentType: "image/jpeg", byteSize: 512_000,
        createdAt: Date(timeIntervalSince1970: 1_795_000_000)
    )

    static let conditions = PostConditions(weatherType: .rain, feelsLike: -0.5, band: .freezing, observedAt: Date(timeIntervalSince1970: 1_795_000_000))

    func post(
        weather: CurrentWeather?? = .none, revisions: [RevisionResponse]? = nil, status: String? = "hidden", title: String? = tricky,
        conditions: PostConditions? = nil
    ) -> PostResponse {
        PostResponse(
            id: "42", weatherType: "rain", category: "food", title: title, body: Self.tricky,
            region: .init(id: "1835848", name: "서울", countryCode: "KR", currentWeather: weather),
            author: .init(id: "7", displayName: "익명-ab12"),
            createdAt: Date(timeIntervalSince1970: 1_795_000_000), updatedAt: Date(timeIntervalSince1970: 1_795_000_123.9),
            edited: true, isMine: false, media: [Self.media], status: status, revisions: revisions, conditions: conditions
        )
    }

    static func written(_ value: some JSONWritable) -> [UInt8] {
        var writer = JSONWriter()
        value.write(to: &writer)
        return writer.bytes
    }

    /// Writes `value`, checks it decodes and writes back to the same bytes, and returns the JSON object.
    @discardableResult
    func roundTrip<T: JSONWritable & Decodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let bytes = Self.written(value)
        let decoded = try Self.decoder.decode(T.self, from: Data(bytes))
        #expect(Self.written(decoded) == bytes, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], sourceLocation: sourceLocation)
    }

    @Test("posts, pages, media, regions and the moderation types round-trip through their Decodable, escapes included")
    func roundTrips() throws {
        let json = try roundTrip(post())
        #expect(json["title"] as? String == Self.tricky)
        #expect(json["body"] as? String == Self.tricky)
        #expect(json["updatedAt"] as? String == "2026-11-18T11:08:43Z")
        try roundTrip(post(status: nil, title: nil))
        try roundTrip(post(weather: .some(Self.weather)))
        try roundTrip(post(weather: .some(nil)))
        try roundTrip(post(revisions: [RevisionResponse(weatherType: "snow", category: "music", title: nil, body: Self.tricky, replacedAt: Date())]))
        try roundTrip(Page(items: [post(), post(status: nil)], nextCursor: "abc"))
        try roundTrip(Page<PostResponse>(items: [], nextCursor: nil))
        try roundTrip(Self.media)
        let region = RegionResponse(id: "1835848", name: "서울", names: .init(ko: "서울", en: "Seoul"), countryCode: "KR", lat: 37.566, lon: 126.9784, timezone: "Asia/Seoul")
        try roundTrip(region)
        try roundTrip(Page(items: [region, RegionResponse(id: "1", name: "X", names: .init(ko: nil, en: "X"), countryCode: "FR", lat: -0.5, lon: 2, timezone: "UTC")], nextCursor: nil))
        let report = QueueReportResponse(id: "3", reason: "spam", note: Self.tricky, reporterId: nil, reportedTitle: nil, reportedBody: Self.tricky, createdAt: Date(timeIntervalSince1970: 0))
        try roundTrip(QueueItemResponse(post: post(), reports: [report], openReportCount: 1, firstReportedAt: Date(timeIntervalSince1970: 5)))
        try roundTrip(DecisionResponse(post: post(), resolvedReports: 2))
        let withConditions = try roundTrip(post(conditions: Self.conditions))
        let conditions = try #require(withConditions["conditions"] as? [String: Any])
        #expect(Set(conditions.keys) == ["weatherType", "feelsLike", "band", "observedAt"])
        #expect(conditions["feelsLike"] as? Double == -0.5 && conditions["band"] as? String == "freezing")
        try roundTrip(Page(items: FeelsLikeBand.allCases.map { OutfitBandResponse($0, language: .ko) }, nextCursor: nil))
        let outfit = try roundTrip(
            OutfitResponse(
                region: region, currentWeather: Self.weather, band: OutfitBandResponse(.hot, language: .en),
                carry: [CarryResponse(.umbrella, language: .en), CarryResponse(.water, language: .en)],
                posts: Page(items: [post(conditions: Self.conditions)], nextCursor: "c")
            )
        )
        #expect(Set(outfit.keys) == ["region", "currentWeather", "band", "carry", "posts"])
        #expect(Set((outfit["band"] as? [String: Any] ?? [:]).keys) == ["id", "name", "minFeelsLike", "maxFeelsLike", "items"])
    }

    @Test("a post carries the contract's keys: title null when absent, status and revisions only when shown, currentWeather only with include=weather")
    func postKeys() throws {
        let always: Set<String> = [
            "id", "weatherType", "category", "title", "body", "region", "author", "createdAt", "updatedAt", "edited", "isMine", "media", "conditions",
            "helpfulCount", "helpedByMe", "replyCount",
        ]
        let plain = try roundTrip(post(status: nil, title: nil))
        #expect(Set(plain.keys) == always)
        #expect(plain["title"] is NSNull)
        #expect(plain["conditions"] is NSNull)
        #expect((plain["region"] as? [String: Any]).map { Set($0.keys) } == ["id", "name", "countryCode"])
        var staffPost = post(revisions: [], status: "removed")
        staffPost.trustedHelpfulCount = 3
        let staff = try roundTrip(staffPost)
        #expect(Set(staff.keys) == always.union(["status", "revisions", "trustedHelpfulCount"]))
        let unknownWeather = try roundTrip(post(weather: .some(nil)))
        #expect((unknownWeather["region"] as? [String: Any])?["currentWeather"] is NSNull)
        let media = try #require((plain["media"] as? [[String: Any]])?.first)
        #expect(Set(media.keys) == ["id", "url", "previewUrl", "width", "height", "blurhash", "alt", "contentType", "byteSize", "createdAt"])
    }

    @Test("the weather object always carries all 15 keys, absent values as null")
    func weatherKeys() throws {
        let weather = CurrentWeather(
            regionId: "1", weatherType: .snow, description: "눈이 옵니다!", temperature: -1.5, feelsLike: -4, humidity: 90, pressure: nil,
            windSpeed: 2, uvIndex: nil, cloudiness: 100, observedAt: Date(timeIntervalSince1970: 0), fetchedAt: Date(timeIntervalSince1970: 60),
            provider: "kma", stale: true, units: .metric
        )
        let json = try roundTrip(weather)
        #expect(Set(json.keys) == ["regionId", "weatherType", "description", "temperature", "feelsLike", "humidity", "pressure",
                                   "windSpeed", "uvIndex", "cloudiness", "observedAt", "fetchedAt", "provider", "stale", "units"])
        #expect(json["uvIndex"] is NSNull)
        #expect(json["pressure"] is NSNull)
        #expect(json["observedAt"] as? String == "1970-01-01T00:00:00Z")
        #expect(try Self.decoder.decode(CurrentWeather.self, from: Data(Self.written(weather))) == weather)
    }

    @Test("RFC 3339 times are UTC with Z, to the second")
    func dates() {
        #expect(RFC3339.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1_795_000_123.9)) == "2026-11-18T11:08:43Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
    }

    /// The weather object is one model (`CurrentWeather`) and its JSON: humidity and cloudiness are whole percentages
    /// in both, as CONTRACT §6 and the Weather schema say (`integer`). Before, the wire type held them as `Double`
    /// and took `80.5` back without a word.
    @Test("humidity and cloudiness are whole percentages on the wire and in the model")
    func wholePercentages() throws {
        let json = String(decoding: Self.written(Self.weather), as: UTF8.self)
        #expect(json.contains(#""humidity":80,"#) && json.contains(#""cloudiness":90,"#))
        for (whole, fractional) in [(#""humidity":80,"#, #""humidity":80.5,"#), (#""cloudiness":90,"#, #""cloudiness":90.5,"#)] {
            let changed = json.replacingOccurrences(of: whole, with: fractional)
            #expect(changed != json)
            #expect(throws: DecodingError.self, "\(fractional)") { try Self.decoder.decode(CurrentWeather.self, from: Data(changed.utf8)) }
        }
    }

    @Test("integers are written whole, signs and extremes included, as JSONSerialization reads them", arguments: [
        0, 7, -7, 10, -10, 1_234_567_890, Int.max, Int.min, Int(Int32.max) + 1,
    ])
    func integers(_ value: Int) throws {
        var writer = JSONWriter()
        writer.array([value].map(IntBox.init))
        let text = String(decoding: writer.bytes, as: UTF8.self)
        #expect(text == "[\(value)]")
        let read = try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [NSNumber]
        #expect(read?.first?.int64Value == Int64(value))
    }

    @Test("a page reserves room for its posts before writing, so a full page is written without growing")
    func pageCapacity() {
        let page = Page(items: Array(repeating: post(), count: 20), nextCursor: "c")
        var writer = JSONWriter(capacity: page.jsonCapacity)
        page.write(to: &writer)
        #expect(writer.bytes.count <= page.jsonCapacity, "\(writer.bytes.count) bytes written, \(page.jsonCapacity) reserved")
    }

    struct IntBox: JSONWritable {
        let value: Int
        init(_ value: Int) { self.value = value }
        func write(to writer: inout JSONWriter) { writer.int(value) }
    }
}
