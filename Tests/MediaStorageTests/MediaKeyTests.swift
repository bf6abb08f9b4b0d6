import MediaStorage
import Testing

@Suite struct MediaKeyTests {
    @Test func randomKeysAreUniqueAndInTheAllowedCharacters() {
        var seen = Set<String>()
        let allowed = Set("abcdefghijklmnopqrstuvwxyz234567".utf8)
        for _ in 0..<10_000 {
            let key = MediaKey.random()
            #expect(key.utf8.count == 32)  // 160 bits in base32
            #expect(key.utf8.allSatisfy { allowed.contains($0) }, "\(key)")
            #expect(MediaKey.isValid(key))
            seen.insert(key)
        }
        #expect(seen.count == 10_000)
    }

    @Test func keysWithPrefixesAndExtensionsAreValid() {
        for key in ["public/abc.jpg", "private/abc.jpg", "a", "a/b/c", "public/x_y-z.preview.jpg", "0"] {
            #expect(MediaKey.isValid(key), "\(key)")
        }
    }
}
