import Database
import Vocabulary

/// A place of the catalog (a GeoNames place; `id` is its geonameid).
public struct Region: Sendable, Equatable, Hashable {
    public var id: Int
    public var nameEn: String
    public var nameKo: String?
    public var countryCode: String
    public var lat: Double
    public var lon: Double
    public var timezone: String
    public var population: Int

    public init(id: Int, nameEn: String, nameKo: String?, countryCode: String, lat: Double, lon: Double, timezone: String, population: Int) {
        self.id = id
        self.nameEn = nameEn
        self.nameKo = nameKo
        self.countryCode = countryCode
        self.lat = lat
        self.lon = lon
        self.timezone = timezone
        self.population = population
    }

    /// The display name: Korean when asked and known, English otherwise.
    public func name(in language: Language) -> String {
        language.placeName(korean: nameKo, english: nameEn)
    }

    /// The columns `init(row:)` reads.
    static let columns = "id, name_en, name_ko, country_code, lat, lon, timezone, population"
    /// The same, qualified with the table name, for joins.
    static let qualifiedColumns = "regions.id, regions.name_en, regions.name_ko, regions.country_code, regions.lat, regions.lon, regions.timezone, regions.population"

    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode(Int.self, "id"),
            nameEn: try row.decode(String.self, "name_en"),
            nameKo: try row.decode(String?.self, "name_ko"),
            countryCode: try row.decode(String.self, "country_code"),
            lat: try row.decode(Double.self, "lat"),
            lon: try row.decode(Double.self, "lon"),
            timezone: try row.decode(String.self, "timezone"),
            population: try row.decode(Int.self, "population")
        )
    }
}
