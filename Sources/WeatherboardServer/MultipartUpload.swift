import Foundation
import Hummingbird
import NIOCore
import NIOFileSystem

/// A `multipart/form-data` upload read as it streams in (vapor's multipart-kit parses it, behind
/// `GuardedMultipartParser`, which keeps a hostile part header from trapping it). Only two parts are read: `file`,
/// which goes to a temporary file (never whole into memory) and stops at `maxFileBytes` (413), and `alt`, kept in
/// memory up to `maxFieldBytes` (422). Every other part, a part without a name and a second `file` or `alt` are
/// refused at their header (422 `invalid_field` naming the part), so nothing else is ever buffered. Whatever its
/// framing, the body is bounded: `maxFileBytes + framingAllowanceBytes` in all (413 as soon as it is crossed, chunked
/// bodies included), `maxPartHeaderBytes` of part headers at a time (400), and `timeLimit` to arrive whole (408).
struct MultipartUpload {
    /// The temporary file holding the `file` part; nil when the request had none. The caller removes it.
    var filePath: String?
    var fileBytes: Int = 0
    var alt: String?

    /// The parts that are read; any other is refused.
    static let fileField = "file"
    static let altField = "alt"
    /// Room in a body for what surrounds the file: the boundaries, the part headers and `alt` (at most 8 KiB).
    /// A body larger than `MEDIA_MAX_BYTES` plus this answers 413 as soon as it is crossed.
    static let framingAllowanceBytes = 64 * 1024
    /// The bytes read while the parser is between a part's boundary and its body (its headers, or a preamble); past
    /// it, 400. multipart-kit keeps a header's name and value in memory whole, so this bounds what one header costs.
    static let maxPartHeaderBytes = 256 * 1024
    /// What a client is told to wait after the upload could not be stored (a full or failing disk is not fixed in seconds).
    static let storageRetryAfterSeconds = 30

    /// Removes the temporary file, in the background (the request is answered meanwhile).
    func removeFile() {
        guard let filePath else { return }
        Task { _ = try? await FileSystem.shared.removeItem(at: FilePath(filePath)) }
    }

    /// The boundary of a `multipart/form-data` content type, or nil (415 for anything else).
    static func boundary(of contentType: String?) -> String? {
        guard let contentType else { return nil }
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            // RFC 2046: 1–70 characters from a small set; anything else is not a usable boundary.
            guard (1...70).contains(value.utf8.count), value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return nil }
            return value
        }
        return nil
    }

    /// The `name` parameter of a `Content-Disposition: form-data; name="…"` header.
    static func fieldName(fromDisposition value: String) -> String? {
        for part in value.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "name" else { continue }
            var name = pair[1].trimmingCharacters(in: .whitespaces)
            if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") { name = String(name.dropFirst().dropLast()) }
            return name
        }
        return nil
    }

    /// Reads the whole body within `timeLimit` (else 408 `request_timeout`, the temporary file removed before the
    /// answer). Throws `APIError` for a malformed body (400), a refused part or a long `alt` (422), a body or file over
    /// its bound (413) or a temporary file that cannot be written (503); `CancellationError` when the request itself
    /// was cancelled.
    static func read(
        _ body: RequestBody, boundary: String, maxFileBytes: Int, maxFieldBytes: Int, temporaryDirectory: String, timeLimit: Duration
    ) async throws -> MultipartUpload {
        try await withThrowingTaskGroup(of: MultipartUpload?.self) { group in
            group.addTask {
                try await readBody(body, boundary: boundary, maxFileBytes: maxFileBytes, maxFieldBytes: maxFieldBytes, temporaryDirectory: temporaryDirectory)
            }
            group.addTask {
                try await Task.sleep(for: timeLimit)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            if let upload = first { return upload }
            // The time limit came first. The reader, cancelled, removes its file before it ends; one that finished at
            // the same instant hands its file back here.
            while let late = try? await group.next() {
                if let path = late?.filePath { _ = try? await FileSystem.shared.removeItem(at: FilePath(path)) }
            }
            throw APIError.requestTimeout("the upload did not arrive within \(timeLimit.components.seconds) s")
        }
    }

    private static func readBody(
        _ body: RequestBody, boundary: String, maxFileBytes: Int, maxFieldBytes: Int, temporaryDirectory: String
    ) async throws -> MultipartUpload {
        let state = ParseState()
        let parser = GuardedMultipartParser(boundary: boundary)
        parser.onHeader = { name, value in
            guard state.refusal == nil, name.lowercased() == "content-disposition" else { return }
            state.admit(fieldName(fromDisposition: value))
        }
        parser.onBody = { buffer in
            guard state.refusal == nil else { return }
            if state.currentName == nil { state.admit(nil) }
            state.inHeaders = false
            if let name = state.currentName { state.pending.append((name, buffer)) }
        }
        parser.onPartComplete = {
            guard state.refusal == nil else { return }
            if state.currentName == nil { state.admit(nil) }
            if let name = state.currentName { state.pending.append((name, nil)) }
            state.currentName = nil
            state.inHeaders = true
        }
        let maxBodyBytes = maxFileBytes + framingAllowanceBytes
        var upload = MultipartUpload()
        var handle: WriteFileHandle?
        var writtenOffset: Int64 = 0
        // The file's bytes are gathered into writes of `writeBatchBytes`: the body arrives in chunks of a few KiB,
        // and a file-system call per chunk (two thread hops each) cost more than decoding the image.
        var unwritten = ByteBuffer()
        func flush() async throws {
            guard unwritten.readableBytes > 0 else { return }
            do {
                if handle == nil {
                    let path = temporaryDirectory + "/upload-" + UUID().uuidString
                    upload.filePath = path
                    handle = try await FileSystem.shared.openFile(forWritingAt: FilePath(path), options: .newFile(replaceExisting: false))
                }
                if let handle {
                    writtenOffset += Int64(try await handle.write(contentsOf: unwritten.readableBytesView, toAbsoluteOffset: writtenOffset))
                }
            } catch {
                throw StorageFailed(underlying: error)
            }
            unwritten.clear()
        }
        var altBytes: [UInt8]?
        var fileDone = false
        var bodyBytes = 0
        var headerBytes = 0
        /// Closes and removes the temporary file (awaited: the answer goes out after it is gone).
        func discardFile() async {
            if let open = handle {
                handle = nil
                // Closed in a task of its own: in a cancelled task (the time limit, a shutdown) `close()` refuses at once,
                // and a handle dropped unclosed is a fatal error (it crashed the test process when a database outage
                // cancelled uploads).
                await Task { _ = try? await open.close() }.value
            }
            if let path = upload.filePath {
                // Removed in a task of its own too: a cancelled task's file-system calls refuse at once.
                await Task { _ = try? await FileSystem.shared.removeItem(at: FilePath(path)) }.value
            }
            upload.filePath = nil
        }
        do {
            for try await chunk in body {
                bodyBytes += chunk.readableBytes
                guard bodyBytes <= maxBodyBytes else {
                    throw APIError(.contentTooLarge, "payload_too_large", "the upload is larger than \(maxFileBytes) bytes")
                }
                do {
                    try parser.execute(chunk)
                } catch {
                    throw APIError.badRequest("the multipart body is malformed")
                }
                if let refusal = state.refusal { throw refusal }
                headerBytes = state.inHeaders ? headerBytes + chunk.readableBytes : 0
                guard headerBytes <= maxPartHeaderBytes else { throw APIError.badRequest("a part's headers are too long") }
                let pending = state.pending
                state.pending.removeAll(keepingCapacity: true)
                for (name, piece) in pending {
                    if name == fileField {
                        guard let piece else {
                            fileDone = true
                            continue
                        }
                        upload.fileBytes += piece.readableBytes
                        if upload.fileBytes > maxFileBytes {
                            throw APIError(.contentTooLarge, "payload_too_large", "the file is larger than \(maxFileBytes) bytes")
                        }
                        unwritten.writeImmutableBuffer(piece)
                        if unwritten.readableBytes >= Self.writeBatchBytes { try await flush() }
                    } else if let piece {
                        var bytes = altBytes ?? []
                        bytes.append(contentsOf: piece.readableBytesView)
                        guard bytes.count <= maxFieldBytes else { throw APIError.invalidField(name, "is too long") }
                        altBytes = bytes
                    }
                }
            }
            // A body cut short by its task's cancellation (the time limit, a shutdown) is not an upload.
            try Task.checkCancellation()
            if upload.fileBytes > 0, !fileDone { throw APIError.badRequest("the multipart body ended inside the file part") }
            try await flush()
            do {
                try await handle?.close()
            } catch {
                throw StorageFailed(underlying: error)
            }
            handle = nil
        } catch let error as APIError {
            await discardFile()
            throw error
        } catch is StorageFailed {
            await discardFile()
            throw APIError(
                .serviceUnavailable, "media_unavailable", "the server could not store the upload; try again later", retryAfter: storageRetryAfterSeconds
            )
        } catch is CancellationError {
            await discardFile()
            throw CancellationError()
        } catch let error as RequestBodyTimeout {
            // The body stopped arriving (`BODY_TIMEOUT_SECONDS`): 408, as for the upload's own time limit.
            await discardFile()
            throw error
        } catch {
            // The body stream failed: the client broke the HTTP framing or went away mid-body.
            await discardFile()
            throw APIError.badRequest("the upload could not be read")
        }
        if let altBytes {
            guard let text = String(validating: altBytes, as: UTF8.self) else {
                await discardFile()
                throw APIError.invalidField(altField, "is not valid UTF-8")
            }
            upload.alt = text
        }
        return upload
    }

    /// The size of the writes that put the `file` part on disk (at most this much of an upload is in memory).
    static let writeBatchBytes = 512 * 1024

    /// A temporary-file operation failed (a full or failing disk): the server's condition, not the client's.
    private struct StorageFailed: Error {
        let underlying: any Error
    }

    /// What the parser's callbacks collect between two chunks; used by one task only.
    private final class ParseState {
        /// The current part's name, once admitted.
        var currentName: String?
        /// The parts admitted so far (each at most once).
        var seen: Set<String> = []
        /// The first refused part; nothing is collected after it.
        var refusal: APIError?
        /// True between a boundary and the next part's first body byte.
        var inHeaders = true
        /// Body pieces in order, tagged with their part's name; nil marks the end of a part.
        var pending: [(String, ByteBuffer?)] = []

        /// Admits a part by its name, or records why it is refused.
        func admit(_ name: String?) {
            guard let name, name == MultipartUpload.fileField || name == MultipartUpload.altField else {
                // Named in the answer as sent (cut to 64 characters); a part without a name is `part`.
                refusal = .invalidField(name.map { String($0.prefix(64)) } ?? "part", "is not read here; send only `file` and `alt`")
                return
            }
            guard seen.insert(name).inserted else {
                refusal = .invalidField(name, "must be sent once")
                return
            }
            currentName = name
        }
    }
}
