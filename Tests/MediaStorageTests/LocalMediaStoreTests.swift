import Foundation
import MediaStorage
import Testing

/// What only the directory store does: modes a web server can read (and, with a served prefix, modes only the
/// service can read), atomic writes, keys naming directories.
@Suite struct LocalMediaStoreTests {
    func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func filesAre0644AndDirectories0755WithNoTemporaryFilesLeft() async throws {
        try await withTemporaryDirectory { directory in
            let root = directory + "/nested/media"
            let store = LocalMediaStore(directory: root + "/", publicBaseURL: "http://127.0.0.1:8080/media", threadPool: testIO.threadPool)
            try await store.put("public/ab/cd.jpg", [1, 2, 3], contentType: "image/jpeg")
            try await store.put("public/ab/cd.jpg", [4, 5], contentType: "image/jpeg")
            #expect(try mode(root + "/public/ab/cd.jpg") == 0o644)
            #expect(try mode(root + "/public/ab") == 0o755)
            #expect(try mode(root + "/public") == 0o755)
            #expect(try mode(root) == 0o755)
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/public/ab") == ["cd.jpg"])
            #expect(FileManager.default.contents(atPath: root + "/public/ab/cd.jpg") == Data([4, 5]))
            #expect(store.publicURL(for: "public/ab/cd.jpg") == "http://127.0.0.1:8080/media/public/ab/cd.jpg")

            try await store.move("public/ab/cd.jpg", to: "private/ab/cd.jpg")
            #expect(try mode(root + "/private/ab/cd.jpg") == 0o644)
            #expect(try mode(root + "/private/ab") == 0o755)
        }
    }

    @Test func withAServedPrefixEverythingElseIsTheServicesAlone() async throws {
        try await withTemporaryDirectory { directory in
            let root = directory + "/media"
            let store = LocalMediaStore(directory: root, publicBaseURL: "http://127.0.0.1:8080/media/", servedPrefix: "public/", threadPool: testIO.threadPool)
            // The private side first: the root must still come out traversable for the web server.
            try await store.put("private/a.jpg", [1], contentType: "image/jpeg")
            #expect(try mode(root) == 0o755)
            #expect(try mode(root + "/private") == 0o700)
            #expect(try mode(root + "/private/a.jpg") == 0o600)
            try await store.put("public/b.jpg", [2], contentType: "image/jpeg")
            #expect(try mode(root + "/public") == 0o755)
            #expect(try mode(root + "/public/b.jpg") == 0o644)
            // A move takes the mode of the side it lands on.
            try await store.move("private/a.jpg", to: "public/a.jpg")
            #expect(try mode(root + "/public/a.jpg") == 0o644)
            try await store.move("public/b.jpg", to: "private/b.jpg")
            #expect(try mode(root + "/private/b.jpg") == 0o600)
            #expect(try await store.get("private/b.jpg") == [2])
        }
    }

    @Test func aKeyNamingADirectoryIsNoObject() async throws {
        try await withTemporaryDirectory { directory in
            let store = LocalMediaStore(directory: directory, publicBaseURL: "http://127.0.0.1:8080/media/", threadPool: testIO.threadPool)
            try await store.put("public/x/y.jpg", [9], contentType: "image/jpeg")
            #expect(try await store.get("public/x") == nil)
            #expect(try await store.get("public/x/y.jpg/z") == nil)
            try await store.delete("public/x")
            #expect(try await store.get("public/x/y.jpg") == [9])
            // A directory is not moved as if it were an object.
            do {
                try await store.move("public", to: "private")
                Issue.record("a directory was moved")
            } catch let error as MediaStoreError {
                #expect(error.kind == .notFound)
            }
            #expect(try await store.get("public/x/y.jpg") == [9])
        }
    }

    @Test func readersNeverSeeAPartialFile() async throws {
        try await withTemporaryDirectory { directory in
            let store = LocalMediaStore(directory: directory, publicBaseURL: "http://127.0.0.1:8080/media/", threadPool: testIO.threadPool)
            let a = [UInt8](repeating: 0xAA, count: 2 * 1024 * 1024)
            let b = [UInt8](repeating: 0xBB, count: 1024 * 1024)
            try await store.put("public/k.jpg", a, contentType: "image/jpeg")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for i in 0..<10 { try await store.put("public/k.jpg", i % 2 == 0 ? b : a, contentType: "image/jpeg") }
                }
                group.addTask {
                    for _ in 0..<30 {
                        let read = try await store.get("public/k.jpg")
                        #expect(read == a || read == b)
                    }
                }
                try await group.waitForAll()
            }
        }
    }
}
