/// The region object of CONTRACT §6: `{id, name, names: {ko?, en}, countryCode, lat, lon, timezone}`.
public struct RegionResponse: Decodable, Sendable, Equatable {
    public struct Names: Decodable, Sendable, Equatable {
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

// MARK: The one encoding (keys sorted); a region is also part of the feed, which `JSONWriter` writes.

extension RegionResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("countryCode", first: true)
        w.string(countryCode)
        w.key("id")
        w.string(id)
        w.key("lat")
        w.double(lat)
        w.key("lon")
        w.double(lon)
        w.key("name")
        w.string(name)
        w.key("names")
        names.write(to: &w)
        w.key("timezone")
        w.string(timezone)
        w.raw("}")
    }
}

extension RegionResponse.Names: JSONWritable {
    /// `ko` is left out when unknown.
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("en", first: true)
        w.string(en)
        if let ko {
            w.key("ko")
            w.string(ko)
        }
        w.raw("}")
    }
}
