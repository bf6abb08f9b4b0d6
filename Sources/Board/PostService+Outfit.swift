import Vocabulary

extension PostService {
    /// The outfit guide's posts (CONTRACT §9): `outfit` posts the viewer may see, for a reader outside in `band`.
    ///
    /// The one seam where the `fit` order plugs in: §9 ranks these by fit (the band outside first, then its
    /// neighbours, then the rest). Until that order exists they are paged newest first by the list code, and
    /// `band` is not used yet.
    public func outfitPosts(band: FeelsLikeBand, before: Int?, limit: Int, viewer: Viewer) async throws -> PostPage {
        try await list(PostQuery(category: .outfit, before: before, limit: limit), viewer: viewer)
    }
}
