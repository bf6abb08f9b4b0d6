import Foundation
import Hummingbird
import NIOCore
import NIOFileSystem

/// A `multipart/form-data` upload read as it streams in (vapor's multipart-kit parses it, behind
/// `GuardedMultipartParser`, which keeps a hostile part header from trapping it): the `file` part
/// goes to a temporary file, never whole into memory, and stops at `maxFileBytes` (413); small text
/// fields (`alt`) are kept in memory up to `maxFieldBytes`. Unknown parts are skipped.
struct MultipartUpload {
    /// The temporary file holding the `file` part; nil when the request had none. The caller removes it.
    var filePath: String?
    var fileBytes: Int = 0
    var fields: [String: String] = [:]

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

    /// Reads the whole body. Throws `APIError` for a malformed body (400), a file over `maxFileBytes` (413) or a
    /// field over `maxFieldBytes` (422).
    static func read(
        _ body: RequestBody, boundary: String, maxFileBytes: Int, maxFieldBytes: Int, temporaryDirectory: String
    ) async throws -> MultipartUpload {
        let state = ParseState()
        let parser = GuardedMultipartParser(boundary: boundary)
        parser.onHeader = { name, value in
            if name.lowercased() == "content-disposition" { state.currentName = fieldName(fromDisposition: value) }
        }
        parser.onBody = { buffer in
            state.pending.append((state.currentName ?? "", buffer))
        }
        parser.onPartComplete = {
            state.pending.append((state.currentName ?? "", nil))
            state.currentName = nil
        }
        var upload = MultipartUpload()
        var handle: WriteFileHandle?
        var writtenOffset: Int64 = 0
        // The file's bytes are gathered into writes of `writeBatchBytes`: the body arrives in chunks of a few KiB,
        // and a file-system call per chunk (two thread hops each) cost more than decoding the image.
        var unwritten = ByteBuffer()
        func flush() async throws {
            guard unwritten.readableBytes > 0 else { return }
            if handle == nil {
                let path = temporaryDirectory + "/upload-" + UUID().uuidString
                upload.filePath = path
                handle = try await FileSystem.shared.openFile(forWritingAt: FilePath(path), options: .newFile(replaceExisting: false))
            }
            if let handle {
                writtenOffset += Int64(try await handle.write(contentsOf: unwritten.readableBytesView, toAbsoluteOffset: writtenOffset))
            }
            unwritten.clear()
        }
        var fieldBuffers: [String: [UInt8]] = [:]
        var fileDone = false
        func fail(_ error: APIError) async -> APIError {
            _ = try? await handle?.close()
            handle = nil
            if let path = upload.filePath { _ = try? await FileSystem.shared.removeItem(at: FilePath(path)) }
            return error
        }
        do {
            for try await chunk in body {
                do {
                    try parser.execute(chunk)
                } catch {
                    throw await fail(.badRequest("the multipart body is malformed"))
                }
                let pending = state.pending
                state.pending.removeAll(keepingCapacity: true)
                for (name, piece) in pending {
                    if name == "file" {
                        guard let piece else {
                            fileDone = true
                            continue
                        }
                        guard !fileDone else { throw await fail(.invalidField("file", "must be sent once")) }
                        upload.fileBytes += piece.readableBytes
                        if upload.fileBytes > maxFileBytes {
                            throw await fail(APIError(.contentTooLarge, "payload_too_large", "the file is larger than \(maxFileBytes) bytes"))
                        }
                        unwritten.writeImmutableBuffer(piece)
                        if unwritten.readableBytes >= Self.writeBatchBytes { try await flush() }
                    } else if let piece {
                        var bytes = fieldBuffers[name, default: []]
                        bytes.append(contentsOf: piece.readableBytesView)
                        guard bytes.count <= maxFieldBytes else {
                            throw await fail(.invalidField(name, "is too long"))
                        }
                        fieldBuffers[name] = bytes
                    }
                }
            }
            try await flush()
            try await handle?.close()
            handle = nil
        } catch let error as APIError {
            throw error
        } catch {
            throw await fail(.badRequest("the upload could not be read"))
        }
        for (name, bytes) in fieldBuffers {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                if let path = upload.filePath { _ = try? await FileSystem.shared.removeItem(at: FilePath(path)) }
                throw APIError.invalidField(name, "is not valid UTF-8")
            }
            upload.fields[name] = text
        }
        return upload
    }

    /// The size of the writes that put the `file` part on disk (at most this much of an upload is in memory).
    static let writeBatchBytes = 512 * 1024

    /// What the parser's callbacks collect between two chunks; used by one task only.
    private final class ParseState {
        var currentName: String?
        /// Body pieces in order, tagged with their part's name; nil marks the end of a part.
        var pending: [(String, ByteBuffer?)] = []
    }
}
