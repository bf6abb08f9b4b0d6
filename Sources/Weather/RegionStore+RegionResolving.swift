import Vocabulary

/// The board resolves a new post's region through the catalog's one lookup (cached like every found region).
extension RegionStore: RegionResolving {
    public func regionExists(id: Int) async throws -> Bool {
        try await region(id: id) != nil
    }

    public func nearestRegionID(lat: Double, lon: Double) async throws -> Int? {
        try await nearest(lat: lat, lon: lon)?.id
    }
}
