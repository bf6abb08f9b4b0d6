import Foundation
import Imaging
import Logging
import MediaStorage
import RateLimit

/// CONTRACT §8: uploads (decoded and re-encoded off the request threads), their alt text, deletion, the
/// moderators' view, and keeping each media's files on the side (public or private) its post allows.
public struct MediaService: Sendable {
    let records: MediaRecords
    let files: MediaFiles
    let processor: ImageProcessor
    let rateLimiter: RateLimiter
    let logger: Logger
    let observer: (@Sendable (Event) -> Void)?
    /// The blocked terms: alt text is public with its post, so an alt that matches holds the post it is on.
    let filter: any ContentFilter

    /// What happened, for metrics.
    public enum Event: Sendable {
        /// One upload: `outcome` is `created`, `unsupported`, `too_large_image`, `undecodable`, `timed_out`, `busy`,
        /// `rate_limited`, `error`; bytes received and written; seconds spent decoding and encoding.
        case upload(outcome: String, bytesIn: Int, bytesOut: Int, processingSeconds: Double?)
        /// A storage call failed (put, move, delete, read).
        case storageError(operation: String)
    }

    public init(
        records: MediaRecords, files: MediaFiles, processor: ImageProcessor, rateLimiter: RateLimiter, logger: Logger,
        observer: (@Sendable (Event) -> Void)? = nil, filter: any ContentFilter = NoContentFilter()
    ) {
        self.filter = filter
        self.records = records
        self.files = files
        self.processor = processor
        self.rateLimiter = rateLimiter
        self.logger = logger
        self.observer = observer
    }

    /// Uploads per account: anonymous 10, registered 50 an hour (any hour). Counted before the image is
    /// decoded, so a stream of hostile files costs its sender the allowance, not the server its CPU.
    static func uploadPolicy(_ identity: Identity) -> RateLimitPolicy {
        identity.account.kind == .anonymous ? .anonymousUploads : .registeredUploads
    }

    public static func validateAlt(_ raw: String?) throws -> String? {
        try raw.map { try TextRules.validate($0, field: "alt", range: 0...1500) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Who may upload at all: checked before the body is read.
    public func checkUploader(_ identity: Identity) throws {
        try identity.requireNotBanned()
    }

    /// `POST /v1/media`: `file` is the upload, already streamed to a temporary file of `byteCount` bytes.
    public func upload(file: String, byteCount: Int, alt rawAlt: String?, by identity: Identity) async throws -> Media {
        try checkUploader(identity)
        let alt = try Self.validateAlt(rawAlt)
        do {
            try await rateLimiter.acquire(Self.uploadPolicy(identity), subject: "\(identity.accountID)")
        } catch {
            observer?(.upload(outcome: "rate_limited", bytesIn: byteCount, bytesOut: 0, processingSeconds: nil))
            throw error
        }
        let clock = ContinuousClock()
        let start = clock.now
        let image: ProcessedImage
        do {
            image = try await processor.process(file: file)
        } catch let error as ImageError {
            observer?(.upload(outcome: Self.outcome(error), bytesIn: byteCount, bytesOut: 0, processingSeconds: Self.seconds(clock.now - start)))
            throw error
        }
        let seconds = Self.seconds(clock.now - start)
        let key = MediaKey.random()
        do {
            try await files.put(key, full: image.full, preview: image.preview)
        } catch {
            observer?(.storageError(operation: "put"))
            observer?(.upload(outcome: "error", bytesIn: byteCount, bytesOut: 0, processingSeconds: seconds))
            await deleteFiles([key])
            throw error
        }
        do {
            let media = try await records.insert(
                MediaRecords.NewMedia(
                    ownerID: identity.accountID, storageKey: key, width: image.width, height: image.height,
                    byteSize: image.full.count, previewByteSize: image.preview.count, blurhash: image.blurhash, alt: alt
                )
            )
            observer?(.upload(outcome: "created", bytesIn: byteCount, bytesOut: image.full.count + image.preview.count, processingSeconds: seconds))
            return media
        } catch {
            observer?(.upload(outcome: "error", bytesIn: byteCount, bytesOut: 0, processingSeconds: seconds))
            await deleteFiles([key])
            throw error
        }
    }

    static func outcome(_ error: ImageError) -> String {
        switch error {
        case .unsupported: return "unsupported"
        case .tooManyPixels: return "too_large_image"
        case .undecodable: return "undecodable"
        case .timedOut: return "timed_out"
        case .busy: return "busy"
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The caller's own media; anyone else's is `notOwner`, an unknown id `notFound`.
    public func media(id: Int, by identity: Identity) async throws -> Media {
        guard let media = try await records.media(id: id) else { throw BoardError.notFound("media") }
        try Self.requireOwn(media, identity)
        return media
    }

    /// Sets the alt text of the caller's own media (`notOwner` otherwise, `notFound` for an unknown id), not while
    /// banned: decided on the media's locked row, in a transaction that checks the caller first (`Caller`).
    public func setAlt(id: Int, alt rawAlt: String?, by caller: Caller) async throws -> Media {
        let alt = try Self.validateAlt(rawAlt)
        let held = try await filter.shouldHold([alt ?? ""])
        let found = try await records.setAlt(id: id, alt: alt, holdingItsPost: held, by: caller) { media, identity in
            try identity.requireNotBanned()
            try Self.requireOwn(media, identity)
        }
        guard let (updated, heldPost) = found else { throw BoardError.notFound("media") }
        if let heldPost { await syncVisibility(.post(heldPost)) }
        return updated
    }

    /// The caller's own media that is not retired: `notFound` for retired media, `notOwner` for anyone else's.
    static func requireOwn(_ media: Media, _ identity: Identity) throws {
        guard !media.isRetired else { throw BoardError.notFound("media") }
        guard media.ownerID == identity.accountID else { throw BoardError.notOwner }
    }

    /// The alt texts of the owner's media among `ids`, for the blocked-term check of a post they are put on.
    func altTexts(_ ids: [Int], ownerID: Int) async throws -> [String] {
        ids.isEmpty ? [] : try await records.altTexts(ids, ownerID: ownerID)
    }

    /// `DELETE /v1/media/{id}`: off its post, files deleted. Media a report names stays, private, as evidence.
    public func delete(id: Int, by caller: Caller) async throws {
        if let key = try await records.deleteOrRetire(id: id, by: caller, check: { media, identity in try Self.requireOwn(media, identity) }) {
            await deleteFiles([key])
        }
        await syncVisibility(.media(id))
    }

    /// A moderator reads any media's file (public or private) through the API.
    public func moderatorFile(id: Int, variant: MediaFiles.Variant, by identity: Identity) async throws -> [UInt8] {
        try identity.requireModerator()
        guard let media = try await records.media(id: id), let bytes = try await files.read(media, variant) else {
            throw BoardError.notFound("media")
        }
        return bytes
    }

    /// Which media a sync looks at: everything due (the background loop), or what one request just changed.
    public enum SyncScope: Sendable {
        case all
        case post(Int)
        case owner(Int)
        case media(Int)
    }

    /// Moves the files of media whose post changed visibility, or that was retired (taken off a post, its account
    /// deleted): the `sync_due` rows, in batches of `batchSize`, until none is left but those that failed in this
    /// pass. Returns how many were moved. A request that changed a post's visibility calls it for that post at once; the
    /// background loop calls it for everything. Safe on every instance at once: each row is claimed by one sync
    /// while it moves (``MediaRecords/syncClaimSeconds``); a row whose move failed stays due and is retried by a
    /// later pass. Moves are idempotent, so a sync that died mid-way is simply redone.
    @discardableResult
    public func syncVisibility(_ scope: SyncScope = .all, batchSize: Int = 100) async -> Int {
        var moved = 0
        var failed: [Int] = []
        while true {
            let due: [(id: Int, key: String, isPublic: Bool, shouldBePublic: Bool)]
            do {
                due = try await records.claimForSync(scope, limit: batchSize, excluding: failed)
            } catch {
                logger.warning("media visibility sync could not read its work; it is retried", metadata: ["error": "\(error)"])
                return moved
            }
            for item in due {
                do {
                    if item.isPublic != item.shouldBePublic {
                        try await files.setPublic(item.key, item.shouldBePublic)
                        moved += 1
                    }
                    try await records.synced(id: item.id, isPublic: item.shouldBePublic)
                } catch {
                    failed.append(item.id)
                    observer?(.storageError(operation: "move"))
                    logger.warning("media visibility sync failed for one media; it is retried", metadata: ["media": "\(item.id)", "error": "\(error)"])
                    try? await records.release(id: item.id)
                }
            }
            if due.count < batchSize { return moved }
        }
    }

    /// Best effort: a file that cannot be deleted now is logged (its row is already gone).
    public func deleteFiles(_ keys: [String]) async {
        for key in keys {
            do {
                try await files.delete(key)
            } catch {
                observer?(.storageError(operation: "delete"))
                logger.warning("could not delete media files", metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
    }
}
