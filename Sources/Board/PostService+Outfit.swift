import Vocabulary

extension PostService {
    /// The outfit guide's posts (CONTRACT §9): `outfit` posts the viewer may see, for a reader outside in `band`,
    /// in `sort` order (`fit` unless asked: the band outside first, then its neighbours, then the rest).
    public func outfitPosts(band: FeelsLikeBand, sort: PostSort, before: Int?, after: PostSort.Position?, limit: Int, viewer: Viewer) async throws -> PostPage {
        var query = PostQuery(category: .outfit, before: before, limit: limit)
        query.sort = sort
        query.after = after
        query.fitBand = band
        return try await list(query, viewer: viewer)
    }
}
