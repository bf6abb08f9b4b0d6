/// The formats an upload may be in, recognized by their first bytes (never by name or declared type).
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg
    case png
    case webp
    /// HEIC/HEIF: an ISO-BMFF `ftyp` box whose major brand is one of HEIF's image brands.
    case heif

    /// How many leading bytes `init(sniffing:)` looks at.
    public static let sniffLength = 12

    /// The format whose signature starts `bytes`, or `nil` (unsupported).
    public init?(sniffing bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(Self.sniffLength))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if head.count >= 12, head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WEBP".utf8) {
            self = .webp
        } else if head.count >= 12, head[4..<8].elementsEqual("ftyp".utf8),
                  Self.heifBrands.contains(where: { head[8..<12].elementsEqual($0.utf8) }) {
            self = .heif
        } else {
            return nil
        }
    }

    /// Major brands of HEIF still images and image sequences (HEVC-coded, and the generic `mif1`/`msf1`).
    /// AVIF's `avif`/`avis` are not among them.
    static let heifBrands = ["heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "msf1"]
}
