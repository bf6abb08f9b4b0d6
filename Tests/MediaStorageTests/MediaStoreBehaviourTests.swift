import Foundation
import MediaStorage
import Testing

/// One behaviour suite, run against the directory store and the S3 store alike.
@Suite struct MediaStoreBehaviourTests {
    @Test(arguments: StoreKind.allCases)
    func binaryRoundTrip(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let small: [UInt8] = [0x00, 0x00, 0xff, 0x0a, 0x0d, 0x00] + (0...255).map { UInt8($0) } + [0x00]
            let smallKey = "public/\(MediaKey.random()).jpg"
            try await store.put(smallKey, small, contentType: "image/jpeg")
            #expect(try await store.get(smallKey) == small)

            let large = patternBytes(5 * 1024 * 1024)
            let largeKey = "public/\(MediaKey.random()).jpg"
            try await store.put(largeKey, large, contentType: "image/jpeg")
            let read = try await store.get(largeKey)
            #expect(read?.count == large.count)
            #expect(read == large)

            // A second put replaces the object.
            try await store.put(smallKey, [1, 2, 3], contentType: "image/jpeg")
            #expect(try await store.get(smallKey) == [1, 2, 3])
            // An empty object is an object.
            let emptyKey = "public/\(MediaKey.random())"
            try await store.put(emptyKey, [], contentType: "application/octet-stream")
            #expect(try await store.get(emptyKey) == [])
            for key in [smallKey, largeKey, emptyKey] { try await store.delete(key) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func missingKeyIsNil(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.get("public/\(MediaKey.random()).jpg") == nil)
            #expect(try await store.get(MediaKey.random()) == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deleteIsIdempotent(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let key = "public/\(MediaKey.random()).jpg"
            try await store.put(key, [7, 0, 7], contentType: "image/jpeg")
            try await store.delete(key)
            #expect(try await store.get(key) == nil)
            try await store.delete(key)
            try await store.delete("private/\(MediaKey.random())/never.jpg")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func moveBetweenPublicAndPrivate(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let name = "\(MediaKey.random()).jpg"
            let bytes = patternBytes(70_000, seed: 42)
            try await store.put("public/\(name)", bytes, contentType: "image/jpeg")

            try await store.move("public/\(name)", to: "private/\(name)")
            #expect(try await store.get("public/\(name)") == nil)
            #expect(try await store.get("private/\(name)") == bytes)

            // Repeating a finished move is fine (a retried job).
            try await store.move("public/\(name)", to: "private/\(name)")
            #expect(try await store.get("private/\(name)") == bytes)

            try await store.move("private/\(name)", to: "public/\(name)")
            #expect(try await store.get("private/\(name)") == nil)
            #expect(try await store.get("public/\(name)") == bytes)

            // Nothing at either key: there was nothing to move.
            do {
                try await store.move("public/\(MediaKey.random())", to: "private/\(MediaKey.random())")
                Issue.record("a move of nothing succeeded")
            } catch let error as MediaStoreError {
                #expect(error.kind == .notFound)
            }
            try await store.delete("public/\(name)")
        }
    }

    static let hostileKeys = [
        "../x", "/etc/passwd", "a/../../b", "..", ".", "", "a//b", "a/", "/", ".hidden", "a/.tmp-x", "a/./b",
        "A.jpg", "a b", "a\u{0}b", "é.jpg", "a%2e%2e/b", "a\\b", "a?b", "a#b", "a\nb", "..\u{2215}x",
        String(repeating: "a", count: 513),
    ]

    @Test(arguments: StoreKind.allCases)
    func hostileKeysAreRefusedBeforeAnyIO(kind: StoreKind) async throws {
        // The local store points at a directory that must still not exist afterwards; the S3 store at a port where
        // nothing listens, so any request would fail as `transport`, not `invalidKey`.
        try await withTemporaryDirectory { directory in
            let store: any MediaStore
            switch kind {
            case .local:
                store = LocalMediaStore(directory: directory, publicBaseURL: "http://127.0.0.1:8080/media/", threadPool: testIO.threadPool)
            case .s3:
                store = S3MediaStore(
                    endpoint: "http://127.0.0.1:1", bucket: "b", region: "us-east-1", accessKeyID: "k", secretAccessKey: "s",
                    publicBaseURL: "https://media.example.test/", httpClient: testIO.httpClient
                )
            }
            for key in Self.hostileKeys {
                #expect(!MediaKey.isValid(key), "\(key.debugDescription)")
                let good = "public/\(MediaKey.random())"
                let operations: [(String, () async throws -> Void)] = [
                    ("put", { try await store.put(key, [1], contentType: "image/jpeg") }),
                    ("get", { _ = try await store.get(key) }),
                    ("delete", { try await store.delete(key) }),
                    ("move from", { try await store.move(key, to: good) }),
                    ("move to", { try await store.move(good, to: key) }),
                ]
                for (name, operation) in operations {
                    do {
                        try await operation()
                        Issue.record("\(name) \(key.debugDescription) was accepted")
                    } catch {
                        #expect(MediaStoreError.Kind.invalidKey.matches(error), "\(name) \(key.debugDescription): \(error)")
                    }
                }
            }
            #expect(!FileManager.default.fileExists(atPath: directory))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func parallelPutsAndGets(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let items = (0..<20).map { i in ("public/\(MediaKey.random()).jpg", patternBytes(10_000 + i * 997, seed: UInt64(i))) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (key, bytes) in items {
                    group.addTask { try await store.put(key, bytes, contentType: "image/jpeg") }
                }
                try await group.waitForAll()
            }
            let results = try await withThrowingTaskGroup(of: (String, [UInt8]?).self) { group in
                for (key, _) in items {
                    group.addTask { (key, try await store.get(key)) }
                }
                var results: [String: [UInt8]?] = [:]
                for try await (key, bytes) in group { results[key] = bytes }
                return results
            }
            for (key, bytes) in items {
                #expect(results[key] == .some(bytes), "\(key)")
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (key, _) in items { group.addTask { try await store.delete(key) } }
                try await group.waitForAll()
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func publicURLJoinsBaseAndKey(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let url = store.publicURL(for: "public/abc.jpg")
            #expect(url.hasSuffix("/public/abc.jpg"))
            #expect(!url.contains("//public"))
            #expect(url.hasPrefix("http"))
        }
    }
}
