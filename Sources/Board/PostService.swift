import Foundation
import Hashing
import RateLimit
import Vocabulary

/// The rules of CONTRACT §4: validation, idempotent creation, visibility, edits with revisions, soft deletes.
public struct PostService: Sendable {
    let store: any PostStore
    /// The region catalog, for a new post's `regionId` or `location` (`Weather`'s `RegionStore` in the server).
    let regions: any RegionResolving
    let rateLimiter: RateLimiter
    let filter: any ContentFilter
    /// Moves media files to follow a post's visibility; nil where media is not served (operator commands).
    let media: MediaService?
    /// A new post's conditions (CONTRACT §9); nil records none (operator commands, servers without weather).
    let conditions: (any ConditionsSource)?
    /// Anonymous accounts older than this are trusted markers (§5's `REPORT_TRUST_AGE_SECONDS`, as for reports).
    let trustAgeSeconds: Int

    public init(
        store: any PostStore, regions: any RegionResolving, rateLimiter: RateLimiter, filter: any ContentFilter = NoContentFilter(),
        media: MediaService? = nil, conditions: (any ConditionsSource)? = nil, trustAgeSeconds: Int = ReportPolicy().trustAgeSeconds
    ) {
        self.conditions = conditions
        self.trustAgeSeconds = trustAgeSeconds
        self.media = media
        self.store = store
        self.regions = regions
        self.rateLimiter = rateLimiter
        self.filter = filter
    }

    // MARK: Create

    /// Creates a post. Its conditions are looked up first, outside the transaction: a region whose weather needs
    /// the provider holds no database connection while it answers, and no weather only means no conditions. So the
    /// caller is checked before that, by a statement of its own (a refused token spends no upstream call), and again
    /// as the transaction's first statement (`Caller`), which holds its rows until the post commits.
    public func create(
        _ draft: PostDraft, by caller: Caller, idempotencyKey: String?, clientAddress: String? = nil
    ) async throws -> (Post, replayed: Bool) {
        let identity = try await caller.resolve()
        try identity.requireNotBanned()
        var post = try await validate(draft)
        let key = try idempotencyKey.map { try IdempotencyKey(scope: "", key: $0, requestHash: Self.requestHash(post)) }
        // Alt text is public with the post: the media's alt texts are checked with its title and body.
        let alts = try await media?.altTexts(post.mediaIDs, ownerID: identity.accountID) ?? []
        let held = try await filter.shouldHold([post.title ?? "", post.body] + alts)
        // After every check that can refuse the request, so a refused create spends no upstream call.
        post.conditions = await conditions?.conditions(regionID: post.regionID, clientAddress: clientAddress)
        // The posting allowance is counted in the transaction that creates the post; a replay is not.
        let limiter = rateLimiter
        let (created, replayed) = try await store.create(post: post, status: held ? .hidden : .visible, by: caller) { identity in
            try identity.requireNotBanned()
            return (key?.scoped("post:\(identity.accountID)"), Admission(limiter, Self.postingPolicy(identity), subject: "\(identity.accountID)"))
        }
        if !created.media.isEmpty { await media?.syncVisibility(.post(created.id)) }
        return (created, replayed)
    }

    static func postingPolicy(_ identity: Identity) -> RateLimitPolicy {
        identity.account.kind == .anonymous ? .anonymousPosting : .registeredPosting
    }

    func validate(_ draft: PostDraft) async throws -> NewPost {
        let weatherType = try Self.weatherType(draft.weatherType)
        let category = try Self.category(draft.category)
        let title = try draft.title.map { try TextRules.validate($0, field: "title", range: 0...100) }
        guard let rawBody = draft.body else { throw BoardError.invalidField(field: "body", message: "is required") }
        let body = try TextRules.validate(rawBody, field: "body", range: 1...2000)
        let regionID: Int
        switch draft.location {
        case .region(let id):
            guard try await regions.regionExists(id: id) else { throw BoardError.invalidField(field: "regionId", message: "no such region") }
            regionID = id
        case .coordinates(let lat, let lon):
            guard (-90...90).contains(lat) else { throw BoardError.invalidField(field: "location.lat", message: "must be between -90 and 90") }
            guard (-180...180).contains(lon) else { throw BoardError.invalidField(field: "location.lon", message: "must be between -180 and 180") }
            guard let nearest = try await regions.nearestRegionID(lat: lat, lon: lon) else {
                throw BoardError.invalidField(field: "location", message: "no region near this point")
            }
            regionID = nearest
        case nil:
            throw BoardError.invalidField(field: "regionId", message: "regionId or location is required")
        }
        return NewPost(
            weatherType: weatherType, category: category, title: title?.isEmpty == true ? nil : title, body: body, regionID: regionID,
            mediaIDs: try Self.validateMediaIDs(draft.mediaIDs)
        )
    }

    static func weatherType(_ raw: String?, field: String = "weatherType") throws -> WeatherType {
        guard let raw else { throw BoardError.invalidField(field: field, message: "is required") }
        guard let type = WeatherType(rawValue: raw), type != .unknown else {
            throw BoardError.invalidField(field: field, message: "must be one of \(WeatherType.postable.map(\.rawValue).joined(separator: ", "))")
        }
        return type
    }

    static func category(_ raw: String?, field: String = "category") throws -> Category {
        guard let raw else { throw BoardError.invalidField(field: field, message: "is required") }
        guard let category = Category(rawValue: raw) else {
            throw BoardError.invalidField(field: field, message: "must be one of \(Category.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return category
    }

    static func requestHash(_ post: NewPost) -> String {
        let canonical = [
            post.weatherType.rawValue, post.category.rawValue, post.title ?? "\u{0}", post.body, String(post.regionID),
            post.mediaIDs.map(String.init).joined(separator: ","),
        ]
        return Digest.sha256Hex(canonical.joined(separator: "\u{1F}"))
    }

    // MARK: Read

    /// One post, or `notFound` when the viewer may not see it.
    public func post(id: Int, viewer: Viewer) async throws -> Post {
        let (found, viewer) = try await store.read(id: id, viewer: viewer)
        guard let post = found, Visibility(viewer).shows(post.state, authorID: post.authorID) else {
            throw BoardError.notFound("post")
        }
        return post
    }

    /// Refuses a post `viewer` may not see, for the calls that only act on it (helpful marks, replies), from the post's
    /// own row. `notFound` as `post(id:viewer:)`.
    static func requireVisible(_ access: PostAccess, viewer: Viewer) throws {
        guard Visibility(viewer).shows(access.state, authorID: access.authorID) else { throw BoardError.notFound("post") }
    }

    public func list(_ query: PostQuery, viewer: Viewer) async throws -> PostPage {
        var query = query
        if query.sort == .fit {
            // A `fit` walk goes on in the band it started in (its cursor's), whatever the weather does meanwhile.
            if case .fit(let band, _, _, _)? = query.after { query.fitBand = band }
            guard query.fitBand != nil else { throw BoardError.invalidField(field: "sort", message: "fit needs the weather of a place") }
        }
        let limit = query.limit
        query.limit = limit + 1
        let (posts, _) = try await store.list(query, viewer: viewer)
        return Self.page(posts, limit: limit, sort: query.sort, outside: query.fitBand)
    }

    public func listOwn(_ identity: Identity, before: Int?, limit: Int) async throws -> PostPage {
        let posts = try await store.listOwn(authorID: identity.accountID, before: before, limit: limit + 1)
        return Self.page(posts, limit: limit)
    }

    static func page(_ posts: [Post], limit: Int, sort: PostSort = .new, outside: FeelsLikeBand? = nil) -> PostPage {
        guard posts.count > limit else { return PostPage(posts: posts, nextCursor: nil) }
        let shown = Array(posts.prefix(limit))
        return PostPage(posts: shown, nextCursor: shown.last.map { sort.cursor(after: $0, outside: outside) })
    }

    // MARK: Helpful marks

    /// Marks a post helpful (CONTRACT §9): not while banned, not one's own post (403 `forbidden`), not a post the
    /// caller can't see (404). Idempotent; only a new mark is charged to the caller's allowance. The caller is checked
    /// in the mark's transaction, first (`Caller`).
    public func markHelpful(id: Int, by caller: Caller) async throws -> HelpfulState {
        let limiter = rateLimiter
        return try await store.markHelpful(postID: id, by: caller, trustAgeSeconds: trustAgeSeconds) { access, identity in
            try identity.requireNotBanned()
            try Self.requireVisible(access, viewer: Viewer(identity))
            guard access.authorID != identity.accountID else { throw BoardError.forbidden("you cannot mark your own post helpful") }
            let policy: RateLimitPolicy = identity.account.kind == .anonymous ? .anonymousMarks : .registeredMarks
            return Admission(limiter, policy, subject: "\(identity.accountID)")
        }
    }

    /// Takes the caller's mark off a post it can see (404 otherwise). Idempotent.
    public func unmarkHelpful(id: Int, by caller: Caller) async throws -> HelpfulState {
        try await store.unmarkHelpful(postID: id, by: caller) { access, identity in try Self.requireVisible(access, viewer: Viewer(identity)) }
    }

    public func revisions(postID: Int) async throws -> [PostRevision] {
        try await store.revisions(postID: postID)
    }

    // MARK: Edit and delete

    /// Applies a PATCH (CONTRACT §4). Edits of one post are serialized: the patch is merged with the post
    /// as it is on its locked row, so two edits of different fields sent at once both take effect, each
    /// stores exactly one revision (the version it replaced), and an edit that changes nothing stores none.
    /// With `precondition` (the API's `If-Match`), an edit of a post whose version no longer matches throws
    /// `preconditionFailed` and changes nothing.
    public func update(id: Int, patch: PostPatch, precondition: VersionPrecondition? = nil, by caller: Caller) async throws -> Post {
        // The patch's own values are checked before the transaction; a refusal is reported only after the
        // visibility and ownership checks (a stranger learns nothing from a bad value).
        let changes = Result { try Self.validate(patch) }
        let rule = try await filter.holdRule()
        // The alt texts of a new media list (the store keeps only the caller's own): the only edit that must know
        // its caller before the transaction (a statement of its own); without one, the post's own.
        let newAlts: [String]? = if let ids = patch.mediaIDs { try await media?.altTexts(ids, ownerID: caller.resolve().accountID) ?? [] } else { nil }
        // Media left off a new list is only marked by the store (the sync and the purger deal with its files).
        let (post, _) = try await store.edit(id: id, by: caller) { post, identity in
            try identity.requireNotBanned()
            guard !post.deleted, Visibility(Viewer(identity)).shows(post.state, authorID: post.authorID) else { throw BoardError.notFound("post") }
            guard post.authorID == identity.accountID else { throw BoardError.notOwner }
            // A bad value is reported before a stale If-Match: the request could never succeed as sent.
            let validated = try changes.get()
            if let precondition, !precondition.matches(post.version) { throw BoardError.preconditionFailed }
            return Self.merge(validated, into: post, rule: rule, alts: newAlts)
        }
        // Media new on a post that is not visible goes to the private side at once.
        if patch.mediaIDs != nil { await media?.syncVisibility(.post(id)) }
        return post
    }

    /// A patch's values, validated and normalized; nil leaves a field alone, `title: .some(nil)` removes it.
    struct ValidatedPatch: Sendable {
        var weatherType: WeatherType?
        var category: Category?
        var title: String??
        var body: String?
        var mediaIDs: [Int]?
    }

    static func validate(_ patch: PostPatch) throws -> ValidatedPatch {
        var title: String?? = nil
        if let newTitle = patch.title {
            let validated = try newTitle.map { try TextRules.validate($0, field: "title", range: 0...100) }
            title = .some(validated?.isEmpty == true ? nil : validated)
        }
        return ValidatedPatch(
            weatherType: try patch.weatherType.map { try Self.weatherType($0) },
            category: try patch.category.map { try Self.category($0) },
            title: title,
            body: try patch.body.map { try TextRules.validate($0, field: "body", range: 1...2000) },
            mediaIDs: try patch.mediaIDs.map { try Self.validateMediaIDs($0) }
        )
    }

    /// At most 4, no repeats (ownership and attachment are checked in the store's transaction).
    static func validateMediaIDs(_ ids: [Int]) throws -> [Int] {
        guard ids.count <= 4 else { throw BoardError.invalidField(field: "mediaIds", message: "must hold at most 4 media ids") }
        guard Set(ids).count == ids.count else { throw BoardError.invalidField(field: "mediaIds", message: "must not repeat a media id") }
        return ids
    }

    /// The row to write when `changes` are applied to `post` as it is now; nil when nothing changes.
    static func merge(_ changes: ValidatedPatch, into post: Post, rule: HoldRule, alts: [String]? = nil) -> PostEdit? {
        let weatherType = changes.weatherType ?? post.weatherType
        let category = changes.category ?? post.category
        let title = changes.title ?? post.title
        let body = changes.body ?? post.body
        let mediaIDs = changes.mediaIDs.flatMap { $0 == post.media.map(\.id) ? nil : $0 }
        if weatherType == post.weatherType, category == post.category, title == post.title, body == post.body, mediaIDs == nil {
            return nil  // nothing changed: no revision
        }
        let held = rule.holds([title ?? "", body] + (alts ?? post.media.compactMap(\.alt)))
        return PostEdit(
            weatherType: weatherType, category: category, title: title, body: body, status: held && post.status == .visible ? .hidden : nil,
            mediaIDs: mediaIDs
        )
    }

    /// Soft delete by the author (repeatable) or a moderator, decided on the post's locked row in a transaction that
    /// checks the caller first (`Caller`). Returns true when a moderator deleted someone else's post; the moderation
    /// log records it in the same statement as the delete.
    @discardableResult
    public func delete(id: Int, by caller: Caller) async throws -> Bool {
        let (post, deletion) = try await store.delete(id: id, by: caller) { post, identity in
            try PostDeletion.decide(
                authorID: post.authorID, deleted: post.deleted, shown: Visibility(Viewer(identity)).shows(post.state, authorID: post.authorID),
                what: "post", by: identity
            )
        }
        if deletion != .none, !post.media.isEmpty { await media?.syncVisibility(.post(id)) }
        return deletion == .logged
    }
}
