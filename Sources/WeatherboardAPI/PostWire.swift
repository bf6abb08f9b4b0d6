import Foundation

/// `Post` object of CONTRACT §4.
public struct PostResponse: Codable, Sendable {
    public struct Region: Codable, Sendable {
        public var id: String
        public var name: String
        public var countryCode: String
        /// Present (possibly `null`) only with `include=weather`.
        public var currentWeather: WeatherResponse??

        public init(id: String, name: String, countryCode: String, currentWeather: WeatherResponse?? = .none) {
            self.id = id
            self.name = name
            self.countryCode = countryCode
            self.currentWeather = currentWeather
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(name, forKey: .name)
            try c.encode(countryCode, forKey: .countryCode)
            if let weather = currentWeather {
                try c.encode(weather, forKey: .currentWeather)
            }
        }
    }

    public struct Author: Codable, Sendable {
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

    public init(
        id: String, weatherType: String, category: String, title: String?, body: String, region: Region, author: Author,
        createdAt: Date, updatedAt: Date, edited: Bool, isMine: Bool, media: [MediaResponse] = [], status: String?, revisions: [RevisionResponse]? = nil
    ) {
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

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(weatherType, forKey: .weatherType)
        try c.encode(category, forKey: .category)
        try c.encode(title, forKey: .title)
        try c.encode(body, forKey: .body)
        try c.encode(region, forKey: .region)
        try c.encode(author, forKey: .author)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(edited, forKey: .edited)
        try c.encode(isMine, forKey: .isMine)
        try c.encode(media, forKey: .media)
        try c.encodeIfPresent(status, forKey: .status)
        try c.encodeIfPresent(revisions, forKey: .revisions)
    }
}

/// A previous version of a post, kept on every edit.
public struct RevisionResponse: Codable, Sendable {
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

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(weatherType, forKey: .weatherType)
        try c.encode(category, forKey: .category)
        try c.encode(title, forKey: .title)
        try c.encode(body, forKey: .body)
        try c.encode(replacedAt, forKey: .replacedAt)
    }
}

/// Weather object of CONTRACT §6.
public struct WeatherResponse: Codable, Sendable, Equatable {
    public var regionId: String
    public var weatherType: String
    public var description: String
    public var temperature: Double
    public var feelsLike: Double
    public var humidity: Double
    /// Sea-level hPa; `null` only with the `kma` provider, which does not report pressure.
    public var pressure: Double?
    public var windSpeed: Double
    public var uvIndex: Double?
    public var cloudiness: Double
    public var observedAt: Date
    public var fetchedAt: Date
    public var provider: String
    public var stale: Bool
    public var units: String

    public init(
        regionId: String, weatherType: String, description: String, temperature: Double, feelsLike: Double, humidity: Double,
        pressure: Double?, windSpeed: Double, uvIndex: Double?, cloudiness: Double, observedAt: Date, fetchedAt: Date,
        provider: String, stale: Bool, units: String
    ) {
        self.regionId = regionId
        self.weatherType = weatherType
        self.description = description
        self.temperature = temperature
        self.feelsLike = feelsLike
        self.humidity = humidity
        self.pressure = pressure
        self.windSpeed = windSpeed
        self.uvIndex = uvIndex
        self.cloudiness = cloudiness
        self.observedAt = observedAt
        self.fetchedAt = fetchedAt
        self.provider = provider
        self.stale = stale
        self.units = units
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(regionId, forKey: .regionId)
        try c.encode(weatherType, forKey: .weatherType)
        try c.encode(description, forKey: .description)
        try c.encode(temperature, forKey: .temperature)
        try c.encode(feelsLike, forKey: .feelsLike)
        try c.encode(humidity, forKey: .humidity)
        try c.encode(pressure, forKey: .pressure)
        try c.encode(windSpeed, forKey: .windSpeed)
        try c.encode(uvIndex, forKey: .uvIndex)
        try c.encode(cloudiness, forKey: .cloudiness)
        try c.encode(observedAt, forKey: .observedAt)
        try c.encode(fetchedAt, forKey: .fetchedAt)
        try c.encode(provider, forKey: .provider)
        try c.encode(stale, forKey: .stale)
        try c.encode(units, forKey: .units)
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
