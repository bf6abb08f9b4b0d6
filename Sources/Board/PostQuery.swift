import Vocabulary

/// List filters, combined freely, plus the page.
public struct PostQuery: Sendable, Equatable {
    public var weatherType: WeatherType?
    public var category: Category?
    public var regionID: Int?
    public var authorID: Int?
    /// Only posts with an id below this one (the cursor).
    public var before: Int?
    public var limit: Int
    /// The order (`new` unless asked); a ranked order resumes after `after` instead of `before`.
    public var sort: PostSort = .new
    public var after: PostSort.Position?
    /// The band outside now, that `fit` ranks for (a `fit` cursor's own band replaces it: `PostService.list`).
    public var fitBand: FeelsLikeBand?
    /// Only posts holding every term (CONTRACT §10, `q`).
    public var search: SearchTerms?

    public init(weatherType: WeatherType? = nil, category: Category? = nil, regionID: Int? = nil, authorID: Int? = nil, before: Int? = nil, limit: Int = 20) {
        self.weatherType = weatherType
        self.category = category
        self.regionID = regionID
        self.authorID = authorID
        self.before = before
        self.limit = limit
    }
}
