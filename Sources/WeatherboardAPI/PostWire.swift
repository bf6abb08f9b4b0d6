import Foundation
import Vocabulary

/// `Post` object of CONTRACT §4.
public struct PostResponse: Decodable, Sendable {
    public struct Region: Decodable, Sendable {
        public var id: String
        public var name: String
        public var countryCode: String
        /// Present (possibly `null`) only with `include=weather`.
        public var currentWeather: CurrentWeather??

        public init(id: String, name: String, countryCode: String, currentWeather: CurrentWeather?? = .none) {
            self.id = id
            self.name = name
            self.countryCode = countryCode
            self.currentWeather = currentWeather
        }

        /// Keeps `include=weather`'s `null` (weather unknown) apart from an absent key (not asked for).
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(String.self, forKey: .id)
            name = try c.decode(String.self, forKey: .name)
            countryCode = try c.decode(String.self, forKey: .countryCode)
            if !c.contains(.currentWeather) {
                currentWeather = .none
            } else if try c.decodeNil(forKey: .currentWeather) {
                currentWeather = .some(nil)
            } else {
                currentWeather = .some(try c.decode(CurrentWeather.self, forKey: .currentWeather))
            }
        }

        enum CodingKeys: String, CodingKey {
            case id, name, countryCode, currentWeather
        }
    }

    public struct Author: Decodable, Sendable {
        public var id: String
        public var displayName: String
        public init(id: String, displayName: String) {
            self.id = id
            self.displayName = displayName
        }
    }

    public var id: String
    public var weatherType: String
    public var category: String
    public var title: String?
    public var body: String
    public var region: Region
    public var author: Author
    public var createdAt: Date
    public var updatedAt: Date
    public var edited: Bool
    public var isMine: Bool
    /// Its images in display order (CONTRACT §8); always present, empty when none.
    public var media: [MediaResponse]
    /// Shown to the author and to moderators only.
    public var status: String?
    /// Shown to moderators in the queue only.
    public var revisions: [RevisionResponse]?
    /// The weather the post was written in (CONTRACT §9); always written, `null` when it has none.
    public var conditions: PostConditions?
    /// Every helpful mark, and whether the caller made one (CONTRACT §9).
    public var helpfulCount: Int
    public var helpedByMe: Bool
    /// The marks that rank the post (trusted, of accounts neither banned nor deleted); shown to moderators only, so a
    /// moderator can tell a popular post from a brigaded one.
    public var trustedHelpfulCount: Int?
    /// Its visible replies (CONTRACT §13).
    public var replyCount: Int

    public init(
        id: String, weatherType: String, category: String, title: String?, body: String, region: Region, author: Author,
        createdAt: Date, updatedAt: Date, edited: Bool, isMine: Bool, media: [MediaResponse] = [], status: String?, revisions: [RevisionResponse]? = nil,
        conditions: PostConditions? = nil, helpfulCount: Int = 0, helpedByMe: Bool = false, trustedHelpfulCount: Int? = nil,
        replyCount: Int = 0
    ) {
        self.replyCount = replyCount
        self.conditions = conditions
        self.helpfulCount = helpfulCount
        self.helpedByMe = helpedByMe
        self.trustedHelpfulCount = trustedHelpfulCount
        self.media = media
        self.id = id
        self.weatherType = weatherType
        self.category = category
        self.title = title
        self.body = body
        self.region = region
        self.author = author
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.edited = edited
        self.isMine = isMine
        self.status = status
        self.revisions = revisions
    }
}

/// A previous version of a post, kept on every edit.
public struct RevisionResponse: Decodable, Sendable {
    public var weatherType: String
    public var category: String
    public var title: String?
    public var body: String
    public var replacedAt: Date

    public init(weatherType: String, category: String, title: String?, body: String, replacedAt: Date) {
        self.weatherType = weatherType
        self.category = category
        self.title = title
        self.body = body
        self.replacedAt = replacedAt
    }
}

/// Entries of `GET /v1/weather-types` and `GET /v1/categories`.
public struct VocabularyItem: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var description: String?
    public var icon: String?

    public init(id: String, name: String, description: String? = nil, icon: String? = nil) {
        self.id = id
        self.name = name
        self.description = description
        self.icon = icon
    }
}

// MARK: The one encoding of each (keys sorted)

extension PostResponse: JSONWritable {
    /// The fixed part (keys, ids, dates, region, author) is under 600 bytes; text and images come on top.
    public var jsonCapacity: Int { 700 + body.utf8.count + (title?.utf8.count ?? 0) + media.count * 400 }

    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("author", first: true)
        author.write(to: &w)
        w.key("body")
        w.string(body)
        w.key("category")
        w.string(category)
        w.key("conditions")
        if let conditions { conditions.write(to: &w) } else { w.raw("null") }
        w.key("createdAt")
        w.date(createdAt)
        w.key("edited")
        w.bool(edited)
        w.key("helpedByMe")
        w.bool(helpedByMe)
        w.key("helpfulCount")
        w.int(helpfulCount)
        w.key("id")
        w.string(id)
        w.key("isMine")
        w.bool(isMine)
        w.key("media")
        w.array(media)
        w.key("region")
        region.write(to: &w)
        w.key("replyCount")
        w.int(replyCount)
        if let revisions {
            w.key("revisions")
            w.array(revisions)
        }
        if let status {
            w.key("status")
            w.string(status)
        }
        w.key("title")
        w.optionalString(title)
        if let trustedHelpfulCount {
            w.key("trustedHelpfulCount")
            w.int(trustedHelpfulCount)
        }
        w.key("updatedAt")
        w.date(updatedAt)
        w.key("weatherType")
        w.string(weatherType)
        w.raw("}")
    }
}

/// The answer of `PUT` / `DELETE /v1/posts/{id}/helpful` (CONTRACT §9).
public struct HelpfulResponse: Decodable, Sendable, Equatable {
    public var helpfulCount: Int
    public var helpedByMe: Bool

    public init(helpfulCount: Int, helpedByMe: Bool) {
        self.helpfulCount = helpfulCount
        self.helpedByMe = helpedByMe
    }
}

extension HelpfulResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("helpedByMe", first: true)
        w.bool(helpedByMe)
        w.key("helpfulCount")
        w.int(helpfulCount)
        w.raw("}")
    }
}

extension PostResponse.Region: JSONWritable {
    /// `currentWeather` is written only with `include=weather`, then `null` when unknown.
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("countryCode", first: true)
        w.string(countryCode)
        if let weather = currentWeather {
            w.key("currentWeather")
            if let weather { weather.write(to: &w) } else { w.raw("null") }
        }
        w.key("id")
        w.string(id)
        w.key("name")
        w.string(name)
        w.raw("}")
    }
}

extension PostResponse.Author: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("displayName", first: true)
        w.string(displayName)
        w.key("id")
        w.string(id)
        w.raw("}")
    }
}

extension RevisionResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("body", first: true)
        w.string(body)
        w.key("category")
        w.string(category)
        w.key("replacedAt")
        w.date(replacedAt)
        w.key("title")
        w.optionalString(title)
        w.key("weatherType")
        w.string(weatherType)
        w.raw("}")
    }
}

/// A post's `conditions` (CONTRACT §9): feels-like in °C whatever `units` a list is read in.
extension PostConditions: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("band", first: true)
        w.string(band.rawValue)
        w.key("feelsLike")
        w.double(feelsLike)
        w.key("observedAt")
        w.date(observedAt)
        w.key("weatherType")
        w.string(weatherType.rawValue)
        w.raw("}")
    }
}

/// The wire form of the weather object: every key, absent values as `null`.
extension CurrentWeather: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("cloudiness", first: true)
        w.int(cloudiness)
        w.key("description")
        w.string(description)
        w.key("feelsLike")
        w.double(feelsLike)
        w.key("fetchedAt")
        w.date(fetchedAt)
        w.key("humidity")
        w.int(humidity)
        w.key("observedAt")
        w.date(observedAt)
        w.key("pressure")
        w.optionalDouble(pressure)
        w.key("provider")
        w.string(provider)
        w.key("regionId")
        w.string(regionId)
        w.key("stale")
        w.bool(stale)
        w.key("temperature")
        w.double(temperature)
        w.key("units")
        w.string(units.rawValue)
        w.key("uvIndex")
        w.optionalDouble(uvIndex)
        w.key("weatherType")
        w.string(weatherType.rawValue)
        w.key("windSpeed")
        w.double(windSpeed)
        w.raw("}")
    }
}
