import ArgumentParser
import Foundation

/// `media get <mediaId> [--output FILE] [--preview]`: saves a media object's image for a moderator to look at,
/// whatever its post's state (through `/v1/moderation/media/{id}`).
struct MediaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media",
        abstract: "Moderators' access to media (images on posts).",
        subcommands: [Get.self]
    )

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Save a media object's image (JPEG) to a file.")

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The media object's id (shown by `show`).")
        var mediaId: String

        @Option(name: [.short, .long], help: "Where to write it (default: media-<id>.jpg, or media-<id>-preview.jpg).")
        var output: String?

        @Flag(name: .long, help: "The preview (long side at most 640 px) instead of the full image.")
        var preview = false

        mutating func run() async throws {
            let (options, mediaId, preview) = (options, mediaId, preview)
            let output = output ?? "media-\(mediaId)\(preview ? "-preview" : "").jpg"
            try await CommandRunner.run {
                let client = try AdminSession.client(options)
                let path = "/v1/moderation/media/\(AdminClient.segment(mediaId))" + (preview ? "/preview" : "")
                let response = try await client.send("GET", path)
                guard FileManager.default.createFile(atPath: output, contents: Data(response.body), attributes: [.posixPermissions: 0o600]) else {
                    throw AdminError(.server, "cannot write \(output)")
                }
                Console.out("saved media \(mediaId) (\(response.body.count) bytes, image/jpeg) to \(output)")
            }
        }
    }
}
