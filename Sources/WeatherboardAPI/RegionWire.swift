/// The region object of CONTRACT §6: `{id, name, names: {ko?, en}, countryCode, lat, lon, timezone}`.
public struct RegionResponse: Codable, Sendable, Equatable {
    public struct Names: Codable, Sendable, Equatable {
        /// Absent when GeoNames has no Hangul name.
        public var ko: String?
        public var en: String

        public init(ko: String?, en: String) {
            self.ko = ko
            self.en = en
        }
    }

    public var id: String
    /// Localized by `Accept-Language`: Korean when asked and known, English otherwise.
    public var name: String
    public var names: Names
    public var countryCode: String
    public var lat: Double
    public var lon: Double
    public var timezone: String

    public init(id: String, name: String, names: Names, countryCode: String, lat: Double, lon: Double, timezone: String) {
        self.id = id
        self.name = name
        self.names = names
        self.countryCode = countryCode
        self.lat = lat
        self.lon = lon
        self.timezone = timezone
    }
}
