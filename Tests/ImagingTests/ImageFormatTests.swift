import Imaging
import Testing

/// Recognition by content only (CONTRACT §8).
@Suite struct ImageFormatTests {
    static func ftyp(_ brand: String) -> [UInt8] {
        [0, 0, 0, 0x18] + Array("ftyp".utf8) + Array(brand.utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
    }

    @Test func signatures() {
        #expect(ImageFormat(sniffing: [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]) == .jpeg)
        #expect(ImageFormat(sniffing: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D]) == .png)
        #expect(ImageFormat(sniffing: Array("RIFF".utf8) + [1, 2, 3, 4] + Array("WEBPVP8 ".utf8)) == .webp)
        #expect(ImageFormat(sniffing: Self.ftyp("heic")) == .heif)
        #expect(ImageFormat(sniffing: Self.ftyp("mif1")) == .heif)
    }

    @Test func lookalikesAreNotRecognized() {
        #expect(ImageFormat(sniffing: []) == nil)
        #expect(ImageFormat(sniffing: [0xFF, 0xD8]) == nil)
        #expect(ImageFormat(sniffing: [0x89, 0x50, 0x4E, 0x47]) == nil)
        #expect(ImageFormat(sniffing: Array("RIFF".utf8) + [1, 2, 3, 4] + Array("WAVE".utf8)) == nil)
        #expect(ImageFormat(sniffing: Array("RIFF".utf8) + [1, 2, 3, 4] + Array("WEB".utf8)) == nil)
        #expect(ImageFormat(sniffing: Self.ftyp("avif")) == nil)
        #expect(ImageFormat(sniffing: Self.ftyp("isom")) == nil)
        #expect(ImageFormat(sniffing: Array("GIF89a".utf8) + [0, 0, 0, 0, 0, 0]) == nil)
        #expect(ImageFormat(sniffing: Array("<svg xmlns=".utf8)) == nil)
        #expect(ImageFormat(sniffing: Array("hello.jpg".utf8)) == nil)
    }
}
