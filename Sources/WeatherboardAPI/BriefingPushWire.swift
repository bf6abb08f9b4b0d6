import Foundation
import Vocabulary

/// The daily briefing's push payload (CONTRACT §14, `openapi.yaml`'s `PushBriefingPayload`): the alert, localized, and
/// `wb: {kind: "briefing", regionId, currentWeather, band, carry, posts: [{id, title}]}`, so a notification extension
/// shows the region's weather and its top posts without a request. `currentWeather` and `band` are `null` when the
/// weather could not be had.
public struct BriefingPushPayload: Sendable, JSONWritable {
    public struct PostLink: Sendable {
        public var id: Int
        public var title: String?

        public init(id: Int, title: String?) {
            self.id = id
            self.title = title
        }
    }

    public var regionID: Int
    public var regionName: String
    public var language: Language
    public var current: CurrentWeather?
    public var band: FeelsLikeBand?
    public var carry: [CarryItem]
    public var posts: [PostLink]

    public init(
        regionID: Int, regionName: String, language: Language, current: CurrentWeather?, band: FeelsLikeBand?, carry: [CarryItem], posts: [PostLink]
    ) {
        self.regionID = regionID
        self.regionName = regionName
        self.language = language
        self.current = current
        self.band = band
        self.carry = carry
        self.posts = posts
    }

    /// "Seoul: Rain, feels like 6.5°C (very cold) · take umbrella, gloves" / "서울: 비, 체감 6.5°C (매우 추움) · 챙길 것: 우산".
    public var alert: (title: String, body: String) {
        let ko = language == .ko
        let title = ko ? "\(regionName) 오늘의 날씨" : "Today in \(regionName)"
        guard let current else {
            return (title, ko ? "지금은 날씨를 알 수 없어요. 게시판에서 확인해 보세요." : "The weather is not available right now. See the board.")
        }
        let degrees = current.units == .imperial ? "°F" : "°C"
        let feels = (current.feelsLike * 10).rounded() / 10
        var body = ko
            ? "\(current.weatherType.name(in: language)), 체감 \(feels)\(degrees)"
            : "\(current.weatherType.name(in: language)), feels like \(feels)\(degrees)"
        if let band { body += " (\(band.name(in: language)))" }
        if !carry.isEmpty {
            let names = carry.map { $0.name(in: language) }.joined(separator: ", ")
            body += ko ? " · 챙길 것: \(names)" : " · take \(names)"
        }
        return (title, body)
    }

    public func write(to w: inout JSONWriter) {
        let alert = self.alert
        w.raw("{")
        w.key("aps", first: true)
        w.raw("{")
        w.key("alert", first: true)
        w.raw("{")
        w.key("body", first: true)
        w.string(alert.body)
        w.key("title")
        w.string(alert.title)
        w.raw("}")
        w.key("thread-id")
        w.string("briefing")
        w.raw("}")
        w.key("wb")
        w.raw("{")
        w.key("band", first: true)
        if let band { OutfitBandResponse(band, language: language).write(to: &w) } else { w.raw("null") }
        w.key("carry")
        w.array(carry.map { CarryResponse($0, language: language) })
        w.key("currentWeather")
        if let current { current.write(to: &w) } else { w.raw("null") }
        w.key("kind")
        w.string("briefing")
        w.key("posts")
        w.raw("[")
        for (i, post) in posts.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{")
            w.key("id", first: true)
            w.string(String(post.id))
            w.key("title")
            w.optionalString(post.title)
            w.raw("}")
        }
        w.raw("]")
        w.key("regionId")
        w.string(String(regionID))
        w.raw("}")
        w.raw("}")
    }

    public func json() -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        write(to: &w)
        return w.bytes
    }
}
