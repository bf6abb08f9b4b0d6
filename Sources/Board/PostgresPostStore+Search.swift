import Database
import Vocabulary

/// Search (CONTRACT §10, `q`): the posts holding every term, with the list's filters, visibility, blocks and order.
///
/// The index (sql/0023) is GIN over each post's keys: its characters, its pairs of adjacent characters and nine block
/// tokens naming the id range it is in. GIN finds candidates, not an order: a plain `keys @> $pairs ORDER BY id DESC`
/// reads every match before it can sort (18,000 heap rows and 72 ms for a word in 2% of 1M posts). So a page in the
/// default order (`new`) is found newest first, a window of ids at a time, in one statement (`windowedQuery`): the
/// newest block of 1,024 ids, then the rest of the 4,096-id block around it, then of the 16,384 one, and so on by
/// fours up to blocks of 64M, each window one GIN lookup of the terms' keys and the block's token, until the page is
/// full or the ids run out. A common word fills a page in the first window; a rare one passes through a window per
/// fourfold of the board (8 at 10M posts), each reading only its own matches. A window reads all of its candidates, up
/// to four times what the page needed: with steps of eight (six tokens a post), a word in 0.1% of posts read ~470
/// candidates a page at 1M posts, 586 pgbench tps against 2,146 with fours (bench/README.md).
///
/// Each window's candidates are checked exactly (`strpos` of every term, in the title and body or in the alt texts:
/// the index's pairs can all be there without the term) and joined to their post for the reader's visibility, the
/// filters and the blocks, so a page counts only what the reader may see.
///
/// Ranked orders (`top`, `hot`, `fit`) and a list of one author walk the list's own indexes (`listQuery`, `fitList`)
/// with the search as one more condition: the ids of every match, when the windows find at most `candidateCap` of
/// them (`p.id = ANY(…)`), else a check of each walked post's document (`documentCondition`) — a term that common
/// fills a page within a few hundred posts of any walk. Every order finds what the reader's list shows
/// (`Visibility.condition`).
extension PostgresPostStore {
    /// The most matches a ranked search ranks by id (`p.id = ANY(…)`); past it, the walk checks each post.
    static let candidateCap = 500

    func searchList(_ query: PostQuery, search: SearchTerms, viewer: Viewer) async throws -> [Post] {
        if query.sort == .new && query.authorID == nil {
            return try Self.posts(await database.query(Self.withMedia(Self.windowedPage(query, search: search, viewer: viewer), viewer: Visibility(viewer).account)))
        }
        let condition: SQLQuery
        if query.authorID != nil {
            // One author's posts are few: the walk of the author's index checks each.
            condition = Self.documentCondition(search)
        } else {
            var all = query
            (all.before, all.after, all.sort) = (nil, nil, .new)
            let rows = try await database.query(
                "SELECT unnest(found) AS id FROM (" + Self.windowedQuery(all, search: search, viewer: viewer, need: Self.candidateCap) + ") w"
            )
            let ids = try rows.map { try $0.decode(Int.self, "id") }
            condition = ids.count < Self.candidateCap ? " AND p.id = ANY(\(ids.map(String.init))::bigint[])" : Self.documentCondition(search)
        }
        if query.sort == .fit { return try await fitList(query, viewer: viewer, condition: condition).0 }
        return try Self.posts(await database.query(Self.withMedia(Self.listQuery(query, viewer: viewer, conditions: [condition]), viewer: Visibility(viewer).account, sort: query.sort)))
    }

    /// A page in the default order: `windowedQuery`'s ids, as posts, newest first, each read by its primary key (a
    /// lateral subquery: as `p.id IN (…)` the page was a hash join over a scan of every post at 10k posts, and at 1M
    /// a merge join walking the primary key down from the newest post to the oldest match).
    static func windowedPage(_ query: PostQuery, search: SearchTerms, viewer: Viewer) -> SQLQuery {
        var sql: SQLQuery = "SELECT page.* FROM (SELECT unnest(found) AS id FROM ("
        sql.append(Self.windowedQuery(query, search: search, viewer: viewer, need: query.limit))
        sql.append(") w) f CROSS JOIN LATERAL (\(raw: PlanTrick.fenced(Self.select + " WHERE p.id = f.id"))) page ORDER BY page.id DESC")
        return sql
    }

    /// One row, `found`: the ids (newest first, at most `need`) of the posts below the cursor that hold every term
    /// and that `viewer` may see with `query`'s filters, gathered window by window (see the type's comment).
    ///
    /// Window `r` ends just below the last one's start (the first at the cursor, or at the newest post) and starts at
    /// the start of the block of 1,024 × 4^min(r, 8) ids around its end. GIN is asked for the terms' keys and that
    /// one block's token (`search_block`): the block may reach above the window into ids an earlier window read (at
    /// most a quarter of it), which the id range leaves out. One token a window: with a token per block of the level
    /// below (up to eight) each window's lookup opened ten posting lists, 60 µs a window at 1M posts.
    /// The token is its own condition (`&&`), not one more key of `@>`: as one array, the generic plan's estimate of a
    /// window grew from 25 rows to 5,000, and its cost past `jit_above_cost` (360 ms of JIT a search at 1M posts).
    /// The window's ids are read once (`OFFSET 0` keeps the planner from copying the lookup into both places that use
    /// its result: it ran twice a window).
    static func windowedQuery(_ query: PostQuery, search: SearchTerms, viewer: Viewer, need: Int) -> SQLQuery {
        // Never above the newest post: a forged cursor of 2^62 would otherwise walk 10^10 empty windows of 64M ids.
        var start: SQLQuery = "(SELECT coalesce(max(id), 0) FROM posts)"
        if let before = query.before { start = "least(\(before - 1)::bigint, " + start + ")" }
        var sql: SQLQuery = "WITH RECURSIVE "
        if let me = Visibility(viewer).account { sql.append("\(Self.blocked(by: me)), ") }
        sql.append("w (round, lo, found, done) AS (SELECT 0, ")
        sql.append(start)
        sql.append(
            """
             + 1, ARRAY[]::bigint[], false
            UNION ALL
            SELECT w.round + 1, x.lo, w.found || x.ids, cardinality(w.found) + cardinality(x.ids) >= \(need) OR x.lo <= 1
            FROM w CROSS JOIN LATERAL (
                SELECT b.lo, array(
                    SELECT s.post_id FROM post_search s JOIN posts p ON p.id = s.post_id
                    WHERE search_keys(s.text_doc || E'\\n' || s.alt_doc, s.post_id) @> \(search.keys.map(String.init))::bigint[]
                      AND search_keys(s.text_doc || E'\\n' || s.alt_doc, s.post_id) && ARRAY[search_block(b.level, b.hi >> (10 + 2 * b.level))]
                      AND \(raw: PlanTrick.unindexed("s.post_id", text: false)) BETWEEN b.lo AND b.hi
            """ as SQLQuery
        )
        sql.append(Self.termConditions(search))
        sql.append(" AND ")
        sql.append(Visibility(viewer).condition("p"))
        var filters = query
        (filters.before, filters.after, filters.sort) = (nil, nil, .new)
        sql.append(Self.filters(filters))
        if viewer.accountID != nil { sql.append(Self.notBlocked(author: query.authorID)) }
        sql.append(
            """
                    ORDER BY s.post_id DESC LIMIT \(need) - cardinality(w.found)) AS ids
                FROM (
                    SELECT h.hi, (h.hi >> (10 + 2 * least(w.round, 8))) << (10 + 2 * least(w.round, 8)) AS lo, least(w.round, 8) AS level
                    FROM (SELECT w.lo - 1 AS hi) h
                ) b
                OFFSET 0
            ) x
            WHERE NOT w.done
            ) SELECT found FROM w WHERE done
            """ as SQLQuery
        )
        return sql
    }

    /// Writes post `postID`'s search document (its title and body, folded), in the caller's transaction: search
    /// never lags a write. Its images' alt texts are the database's to add (sql/0023's trigger on `media`).
    static func index(postID: Int, title: String?, body: String, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO post_search (post_id, text_doc, alt_doc)
            SELECT \(postID), \(SearchTerms.document(title: title, body: body)), coalesce(
                (SELECT string_agg(m.alt_search, E'\\n' ORDER BY m.position) FROM media m WHERE m.post_id = \(postID) AND m.alt_search IS NOT NULL), '')
            ON CONFLICT (post_id) DO UPDATE SET text_doc = EXCLUDED.text_doc
            """
        )
    }

    /// Every term, in the post's title and body or in its alt texts (`s`, its `post_search` row). `strpos`, never
    /// `LIKE`: `%`, `_` and `\` in a term are themselves.
    static func termConditions(_ search: SearchTerms) -> SQLQuery {
        var sql: SQLQuery = ""
        for term in search.terms {
            sql.append(" AND (strpos(s.text_doc, \(term)) > 0 OR strpos(s.alt_doc, \(term)) > 0)" as SQLQuery)
        }
        return sql
    }

    /// The search as a check of each walked post `p` (one primary-key probe of `post_search`, a subplan per row).
    static func documentCondition(_ search: SearchTerms) -> SQLQuery {
        var sql: SQLQuery = " AND (SELECT true FROM post_search s WHERE s.post_id = p.id"
        sql.append(Self.termConditions(search))
        sql.append(")")
        return sql
    }
}

extension PostgresPostStore {
    /// Gives every post written before search existed (sql/0023) its document, and every alt text its folded form, a
    /// thousand rows a transaction; `weatherboard migrate` runs it after the SQL files. Posts whose text was erased
    /// with their account (evidence: body '') get none. Returns how many posts it indexed; a second run indexes none.
    public static func backfillSearch(on database: PostgresPool) async throws -> Int {
        // Each batch resumes after the last id it saw, walking the primary key and probing `post_search` by key for each
        // post (a subplan, not an anti-join: the generic plan merged it with all of `post_search`, 230 ms a batch at 1M).
        // From the start each time, every batch read the table again: quadratic at 10M posts. With nothing left to index
        // a run still walks every post once (2.6 s at 1M). Folding is the server's: rows are read, folded, written back.
        var lastMedia = 0
        while true {
            let after = lastMedia
            guard let last = try await database.transaction({ connection -> Int? in
                let rows = try connection.query(
                    "SELECT id, alt FROM media WHERE id > \(after) AND alt IS NOT NULL AND alt_search IS NULL ORDER BY id LIMIT 1000 FOR UPDATE"
                )
                var last: Int?
                for row in rows {
                    let id = try row.decode(Int.self, "id")
                    try connection.execute("UPDATE media SET alt_search = \(SearchTerms.fold(try row.decode(String.self, "alt"))) WHERE id = \(id)")
                    last = id
                }
                return last
            }) else { break }
            lastMedia = last
        }
        var (indexed, lastPost) = (0, 0)
        while true {
            let after = lastPost
            guard let (count, last) = try await database.transaction({ connection -> (Int, Int)? in
                let rows = try connection.query(
                    """
                    SELECT p.id, p.title, p.body FROM posts p
                    WHERE p.id > \(after) AND p.body <> '' AND (SELECT true FROM post_search s WHERE s.post_id = p.id) IS NULL
                    ORDER BY p.id LIMIT 1000
                    """
                )
                var last: Int?
                for row in rows {
                    let id = try row.decode(Int.self, "id")
                    try Self.index(postID: id, title: try row.decode(String?.self, "title"), body: try row.decode(String.self, "body"), on: connection)
                    last = id
                }
                return last.map { (rows.count, $0) }
            }) else { return indexed }
            (indexed, lastPost) = (indexed + count, last)
        }
    }
}
