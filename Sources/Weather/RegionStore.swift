import Database
import Foundation
import Vocabulary

/// Region lookups and search over the `regions` / `region_names` tables.
///
/// The catalog is static between `weatherboard migrate` runs, so found regions and search pages are kept in
/// process for five minutes (bounded); unknown ids and nearest-region lookups always ask the database.
public struct RegionStore: RegionProviding {
    public let database: PostgresPool
    /// Standbys: the catalog changes only with `weatherboard migrate`, so any standby fresh enough serves it.
    let reads: ReplicaRouter?
    private let regionsByID = RegionCache<Region>(capacity: 50_000)
    private let searches = RegionCache<SearchPage>(capacity: 10_000)

    public init(database: PostgresPool, reads: ReplicaRouter? = nil) {
        self.database = database
        self.reads = reads
    }

    /// A catalog read, on a standby when there is one fresh enough.
    private func read(_ query: SQLQuery) async throws -> PostgresRows {
        guard let reads else { return try await database.query(query) }
        return try await reads.read(.anyStandby) { try await $0.query(query) }
    }

    public func region(id: Int) async throws -> Region? {
        if let cached = regionsByID.value(for: String(id)) { return cached }
        let rows = try await read("SELECT \(raw: Region.columns) FROM regions WHERE id = \(id)")
        guard let region = try rows.first.map(Region.init(row:)) else { return nil }
        regionsByID.store(region, for: String(id))
        return region
    }

    struct SearchPage: Sendable {
        var regions: [Region]
        var next: SearchPosition?
    }

    public func nearest(lat: Double, lon: Double) async throws -> Region? {
        let (lat, lon) = (Self.arithmeticSafe(lat), Self.arithmeticSafe(lon))
        let rows = try await read(
            "SELECT \(raw: Region.columns) FROM regions ORDER BY position <-> region_position(\(lat), \(lon)) LIMIT 1"
        )
        return try rows.first.map(Region.init(row:))
    }

    /// A coordinate as PostgreSQL's float arithmetic takes it. `region_position` multiplies and takes sines, and
    /// PostgreSQL raises "value out of range: underflow" (22003) when a product of non-zero factors rounds to zero,
    /// as 4.9e-324 (the least subnormal double, a valid number in JSON and in a query) times π/180 does. Below a
    /// nanodegree (0.1 mm on the ground) a coordinate is zero.
    static func arithmeticSafe(_ degrees: Double) -> Double {
        abs(degrees) < 1e-9 ? 0 : degrees
    }

    /// Where a page of search results ends: the last region's rank, population and id.
    public struct SearchPosition: Sendable, Equatable {
        /// 0 when the region's own (English or Korean) name matched, 1 when only an alternate name did.
        public var rank: Int
        public var population: Int
        public var id: Int

        public init(rank: Int = 0, population: Int, id: Int) {
            self.rank = rank
            self.population = population
            self.id = id
        }

        /// Opaque to clients: the `Cursor` of the keys `rank:population:id` (no tag, as since the first release).
        public var token: String {
            Cursor.encode(keys: [rank, population, id])
        }

        /// Nil for anything `token` did not write: only its exact text, with rank 0 or 1 and a positive id.
        public init?(token: String) {
            guard let keys = Cursor.decode(token, count: 3), keys[0] <= 1, keys[2] > 0 else { return nil }
            self.init(rank: keys[0], population: keys[1], id: keys[2])
        }
    }

    /// Regions with a name starting with `prefix` (after normalization): those whose own English or Korean
    /// name matches first, then those matching by an alternate name; within each, most populous first (ties
    /// by id). An empty prefix lists every region, most populous first. Returns the page and the next cursor.
    public func search(prefix: String, after cursor: SearchPosition?, limit: Int) async throws -> (regions: [Region], next: SearchPosition?) {
        let normalized = RegionName.normalize(prefix)
        let limit = max(1, min(limit, 100))
        let key = "\(limit)\u{0}\(cursor?.token ?? "")\u{0}\(normalized)"
        if let cached = searches.value(for: key) { return (cached.regions, cached.next) }
        let page = try await searchDatabase(normalized: normalized, after: cursor, limit: limit)
        searches.store(SearchPage(regions: page.regions, next: page.next), for: key)
        return page
    }

    private func searchDatabase(normalized: String, after cursor: SearchPosition?, limit: Int) async throws -> (regions: [Region], next: SearchPosition?) {
        let fetch = limit + 1
        let rank = cursor?.rank ?? -1
        let population = cursor?.population ?? Int.max
        let id = cursor?.id ?? 0
        let rows: PostgresRows
        if normalized.isEmpty {
            rows = try await read("""
                SELECT \(raw: Region.columns), 0 AS rank FROM regions
                WHERE population < \(population) OR (population = \(population) AND id > \(id))
                ORDER BY population DESC, id LIMIT \(fetch)
                """)
        } else {
            let upper = RegionName.upperBound(forPrefix: normalized)
            // Rank the matching names alone (region_names carries the population), then fetch only one page.
            rows = try await read("""
                SELECT \(raw: Region.qualifiedColumns), page.rank FROM (
                    SELECT region_id, rank, population FROM (
                        SELECT region_id, min(CASE WHEN is_primary THEN 0 ELSE 1 END) AS rank, max(population) AS population
                        FROM region_names WHERE name >= \(normalized) AND name < \(upper)
                        GROUP BY region_id
                    ) AS m
                    WHERE (rank, -population, region_id) > (\(rank), -\(population), \(id))
                    ORDER BY rank, population DESC, region_id LIMIT \(fetch)
                ) AS page
                JOIN regions ON regions.id = page.region_id
                ORDER BY page.rank, page.population DESC, page.region_id
                """)
        }
        var regions: [Region] = []
        var ranks: [Int] = []
        for row in rows {
            regions.append(try Region(row: row))
            ranks.append(try row.decode(Int.self, "rank"))
        }
        var next: SearchPosition?
        if regions.count > limit {
            regions.removeLast(regions.count - limit)
            next = regions.last.map { SearchPosition(rank: ranks[limit - 1], population: $0.population, id: $0.id) }
        }
        return (regions, next)
    }
}
