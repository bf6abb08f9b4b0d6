/// How the board resolves where a new post is (CONTRACT §4: `regionId`, or `location` snapped to the nearest
/// region) without knowing the region catalog: `Weather`'s `RegionStore` implements it, and the server hands it
/// to `Board`'s `PostService`, so region lookups have one home.
public protocol RegionResolving: Sendable {
    /// Whether the catalog has a region with this id.
    func regionExists(id: Int) async throws -> Bool
    /// The id of the catalog region nearest to a point; nil only when the catalog is empty.
    func nearestRegionID(lat: Double, lon: Double) async throws -> Int?
}
