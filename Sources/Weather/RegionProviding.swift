/// Region lookups other parts of the server use (the feed, snapping a post's `location`).
public protocol RegionProviding: Sendable {
    /// The region with this id, or nil.
    func region(id: Int) async throws -> Region?
    /// The catalog region nearest to a point (index-backed); nil only when the catalog is empty.
    func nearest(lat: Double, lon: Double) async throws -> Region?
}
