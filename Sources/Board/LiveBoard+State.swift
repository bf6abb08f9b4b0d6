import Vocabulary

extension LiveBoard {
    /// Where a stream is filed: a post or reply event visits only the streams of its region and those of every region;
    /// queue events only the moderation streams.
    enum Bucket: Hashable {
        case anyRegion, region(Int), moderation
    }

    /// One registered stream: what it shows, to whom it reads, and what it has been told.
    struct Entry {
        let sink: Sink
        let kind: Kind
        let language: Language
        let links: Renderer.Links
        /// Authors the reader blocks (board streams of an account).
        var blocked: Set<Int>
        /// Events at or below it were sent by another instance before the client came here.
        var skipThrough: StreamPosition?
        /// Blocks and unblocks applied from events while the blocks read at registration were on their way
        /// (`settleBlocks` applies them again over the second read, so neither can undo the other).
        var blockChanges: [(author: Int, blocked: Bool)]? = []

        init(sink: Sink, kind: Kind, language: Language, links: Renderer.Links, blocked: Set<Int>, skipThrough: StreamPosition?) {
            self.sink = sink
            self.kind = kind
            self.language = language
            self.links = links
            self.blocked = blocked
            self.skipThrough = skipThrough
        }

        var bucket: Bucket {
            switch kind {
            case .moderation: .moderation
            case .board(let stream): stream.regionID.map(Bucket.region) ?? .anyRegion
            }
        }

        /// False for an event another instance already sent this stream.
        func wants(_ event: StreamEvent) -> Bool {
            skipThrough.map { event.position > $0 } ?? true
        }

        mutating func block(_ author: Int, _ blocked: Bool) {
            if blocked { self.blocked.insert(author) } else { self.blocked.remove(author) }
            blockChanges?.append((author, blocked))
        }
    }

    /// Every stream of this instance, by bucket, and the live read's cursor.
    struct State {
        var cursor: StreamPosition?
        var buckets: [Bucket: [ObjectIdentifier: Entry]] = [:]
        var located: [ObjectIdentifier: Bucket] = [:]

        mutating func add(_ entry: Entry) {
            let id = ObjectIdentifier(entry.sink)
            located[id] = entry.bucket
            buckets[entry.bucket, default: [:]][id] = entry
        }

        /// False if it was not registered.
        mutating func remove(_ id: ObjectIdentifier) -> Bool {
            guard let bucket = located.removeValue(forKey: id) else { return false }
            buckets[bucket]?[id] = nil
            if buckets[bucket]?.isEmpty == true { buckets[bucket] = nil }
            return true
        }

        mutating func settleBlocks(of id: ObjectIdentifier, _ authors: Set<Int>) {
            guard let bucket = located[id], var entry = buckets[bucket]?[id] else { return }
            var blocked = authors
            for change in entry.blockChanges ?? [] {
                if change.blocked { blocked.insert(change.author) } else { blocked.remove(change.author) }
            }
            entry.blocked = blocked
            entry.blockChanges = nil
            buckets[bucket]?[id] = entry
        }

        /// Visits the streams `event` may concern (their bucket), or the one of `only`, without copying them.
        func forEachCandidate(of event: StreamEvent, only: ObjectIdentifier?, _ body: (Entry) -> Void) {
            if let only {
                if let bucket = located[only], let entry = buckets[bucket]?[only] { body(entry) }
                return
            }
            switch event.kind {
            case .post, .reply:
                if let all = buckets[.anyRegion] { for entry in all.values { body(entry) } }
                if let region = event.regionID, let local = buckets[.region(region)] { for entry in local.values { body(entry) } }
            case .report, .resolved:
                if let all = buckets[.moderation] { for entry in all.values { body(entry) } }
            case .block, .unblock:
                for (bucket, entries) in buckets where bucket != .moderation {
                    for entry in entries.values { body(entry) }
                }
            }
        }

        /// Applies a block or unblock of `author` by `account` to that reader's streams (`only`: that stream alone), and
        /// returns them.
        mutating func block(_ author: Int, by account: Int, _ blocked: Bool, event: StreamEvent, only: ObjectIdentifier?) -> [Entry] {
            var affected: [ObjectIdentifier] = []
            forEachCandidate(of: event, only: only) { entry in
                if entry.kind.account == account && entry.wants(event) { affected.append(ObjectIdentifier(entry.sink)) }
            }
            return affected.compactMap { id in
                guard let bucket = located[id] else { return nil }
                buckets[bucket]?[id]?.block(author, blocked)
                return buckets[bucket]?[id]
            }
        }
    }
}
