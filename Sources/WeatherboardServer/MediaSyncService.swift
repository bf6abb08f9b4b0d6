import Board
import Logging
import ServiceLifecycle

/// Keeps media files on the side their posts allow: every `interval`, the media whose post changed
/// visibility (hidden, removed, deleted, restored) have their files moved between `public/` and `private/`, and
/// so do the images of deleted accounts and those left off a post (the requests only marked them; the purger
/// deletes them once private). Moderation decisions also run it at once; this loop catches the rest (account
/// deletions, report auto-hides, retries). Every instance runs it; a row is claimed by one sync at a time.
struct MediaSyncService: Service {
    let media: MediaService
    let interval: Duration
    let metrics: AppMetrics

    func run() async throws {
        await repeatUntilShutdown(every: interval) {
            let moved = await media.syncVisibility()
            if moved > 0 { metrics.recordMediaMoves(moved) }
        }
    }
}
