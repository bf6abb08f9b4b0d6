import CVips

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One upload through libvips, synchronously, on the calling thread (an `ImageProcessor` thread):
///
/// 1. the first bytes name the format (else `unsupported`);
/// 2. that format's loader alone (never libvips' own guess) reads the header, lazily and sequentially: more
///    than `maxPixels` is refused here, before a pixel is decoded;
/// 3. `thumbnail_image` shrinks (JPEG and WebP already shrink while decoding when the image is at least
///    4× too big), turns it upright by its EXIF orientation and, if it has an ICC profile, transforms it to
///    sRGB; alpha is flattened onto white; the result is an 8-bit 3-band sRGB image kept in memory;
/// 4. that is saved as JPEG with `strip` (no EXIF, XMP, IPTC, ICC or comment), shrunk again for the
///    preview, saved likewise, and the preview's pixels give the BlurHash.
///
/// The loaded image signals progress, and past `deadline` libvips is told to stop (see `shim.h`).
enum VipsPipeline {
    struct Limits: Sendable {
        var maxPixels: Int
        var maxSide: Int
        var previewSide: Int
        var quality: Int
    }

    /// `nil` once libvips started, else why not. Evaluated once per process, on first use.
    static let startupFailure: String? = wb_vips_setup() == 0 ? nil : takeError()

    /// `deadline` is in `g_get_monotonic_time` microseconds.
    static func process(path: String, limits: Limits, deadline: Int) throws(ImageError) -> ProcessedImage {
        if let startupFailure { throw .undecodable("libvips did not start: \(startupFailure)") }
        guard let format = try sniff(path) else { throw .unsupported }
        let images = Images()

        // Header only: nothing is decoded until pixels are asked for.
        guard let header = images.make({ load(path, format, shrink: 1, out: $0) }) else {
            throw .undecodable(takeError())
        }
        let width = Int(vips_image_get_width(header))
        let height = Int(vips_image_get_height(header))
        guard width > 0, height > 0 else { throw .undecodable("no pixels") }
        guard width * height <= limits.maxPixels else { throw .tooManyPixels(width: width, height: height) }

        // Shrink while decoding (JPEG DCT scaling, libwebp scaling), leaving at least 2× for the resize.
        let shrink = shrinkOnLoad(longSide: max(width, height), target: limits.maxSide, format: format)
        var source = header
        if shrink > 1 {
            guard let shrunk = images.make({ load(path, format, shrink: shrink, out: $0) }) else {
                throw .undecodable(takeError())
            }
            source = shrunk
        }
        wb_vips_set_deadline(source, deadline)

        func step(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32) throws(ImageError) -> UnsafeMutablePointer<VipsImage> {
            if let image = images.make(body) { return image }
            throw failure(deadline)
        }

        var image = try step { wb_vips_thumbnail_image(source, $0, Int32(clamping: limits.maxSide), 0, wb_vips_has_icc_profile(source)) }
        if vips_image_hasalpha(image) != 0 {
            let current = image
            image = try step { wb_vips_flatten_white(current, $0) }
        }
        let flattened = image
        image = try step { wb_vips_colourspace_srgb(flattened, $0) }
        let srgb = image
        image = try step { wb_vips_cast_uchar(srgb, $0) }
        guard vips_image_get_bands(image) == 3 else { throw .undecodable("unexpected band count \(vips_image_get_bands(image))") }

        // Pixels are decoded here; for a rotated image already inside thumbnail_image, which turns it in
        // memory. Either way under the deadline set on `source`.
        let ready = image
        let full = try step { out in
            out.pointee = vips_image_copy_memory(ready)
            return out.pointee == nil ? -1 : 0
        }
        guard wb_vips_monotonic_now() <= deadline else { throw .timedOut }
        let fullJPEG = try saveJPEG(full, quality: limits.quality)

        let shrunkPreview = try step { wb_vips_thumbnail_image(full, $0, Int32(clamping: limits.previewSide), 1, 0) }
        let previewCast = try step { wb_vips_cast_uchar(shrunkPreview, $0) }
        let preview = try step { out in
            out.pointee = vips_image_copy_memory(previewCast)
            return out.pointee == nil ? -1 : 0
        }
        guard vips_image_get_bands(preview) == 3 else { throw .undecodable("unexpected preview band count") }
        let previewJPEG = try saveJPEG(preview, quality: limits.quality)
        let previewWidth = Int(vips_image_get_width(preview))
        let previewHeight = Int(vips_image_get_height(preview))
        let pixels = try memory(of: preview)
        guard let blurhash = BlurHash.encode(rgb: pixels, width: previewWidth, height: previewHeight) else {
            throw .undecodable("preview too small for a BlurHash")
        }
        return ProcessedImage(
            full: fullJPEG,
            preview: previewJPEG,
            width: Int(vips_image_get_width(full)),
            height: Int(vips_image_get_height(full)),
            previewWidth: previewWidth,
            previewHeight: previewHeight,
            blurhash: blurhash,
            source: format
        )
    }

    /// The format of the file's first bytes; `nil` if none (an empty file too).
    static func sniff(_ path: String) throws(ImageError) -> ImageFormat? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .undecodable("cannot open the upload (errno \(errno))") }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: ImageFormat.sniffLength)
        var filled = 0
        while filled < head.count {
            let count = head.withUnsafeMutableBytes { buffer in
                read(fd, buffer.baseAddress.map { $0 + filled }, buffer.count - filled)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        return ImageFormat(sniffing: head.prefix(filled))
    }

    /// JPEG and WebP shrink while decoding; the factor leaves at least 2× for the final resize, as
    /// libvips' own `thumbnail` does. Other formats decode at full size (sequentially, strip by strip).
    static func shrinkOnLoad(longSide: Int, target: Int, format: ImageFormat) -> Int {
        guard target > 0 else { return 1 }
        let factor = longSide / target
        switch format {
        case .jpeg:
            return factor >= 16 ? 8 : factor >= 8 ? 4 : factor >= 4 ? 2 : 1
        case .webp:
            return max(1, factor / 2)
        case .png, .heif:
            return 1
        }
    }

    private static func load(
        _ path: String,
        _ format: ImageFormat,
        shrink: Int,
        out: UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>
    ) -> Int32 {
        // Truncated or corrupt data fails the decode instead of coming out grey.
        let failOn = VIPS_FAIL_ON_ERROR
        switch format {
        case .jpeg: return wb_vips_jpegload(path, out, Int32(clamping: shrink), failOn)
        case .png: return wb_vips_pngload(path, out, failOn)
        case .webp: return wb_vips_webpload(path, out, 1 / Double(max(shrink, 1)), failOn)
        case .heif: return wb_vips_heifload(path, out, failOn)
        }
    }

    private static func saveJPEG(_ image: UnsafeMutablePointer<VipsImage>, quality: Int) throws(ImageError) -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard wb_vips_jpegsave_buffer(image, &buffer, &length, Int32(clamping: quality)) == 0, let buffer else {
            throw .undecodable(takeError())
        }
        defer { g_free(buffer) }
        return [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
    }

    private static func memory(of image: UnsafeMutablePointer<VipsImage>) throws(ImageError) -> [UInt8] {
        var length = 0
        guard let buffer = vips_image_write_to_memory(image, &length) else { throw .undecodable(takeError()) }
        defer { g_free(buffer) }
        return [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
    }

    private static func failure(_ deadline: Int) -> ImageError {
        let message = takeError()
        return wb_vips_monotonic_now() > deadline ? .timedOut : .undecodable(message)
    }

    /// libvips' error text so far, which is then cleared. The buffer is per process, so under concurrency it
    /// may hold another thread's message too: it is for logs only.
    static func takeError() -> String {
        guard let copy = vips_error_buffer_copy() else { return "libvips error" }
        defer { g_free(copy) }
        let message = String(cString: copy).droppingTrailingNewlines()
        return message.isEmpty ? "libvips error" : message
    }
}

/// Images made during one pipeline run, released together when it ends.
private final class Images {
    private var owned: [UnsafeMutablePointer<VipsImage>] = []

    /// Runs a libvips call with an output image; `nil` if it failed.
    func make(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32) -> UnsafeMutablePointer<VipsImage>? {
        var out: UnsafeMutablePointer<VipsImage>?
        let status = body(&out)
        if let out { owned.append(out) }
        return status == 0 ? out : nil
    }

    deinit {
        for image in owned.reversed() { wb_vips_unref(image) }
    }
}

extension String {
    fileprivate func droppingTrailingNewlines() -> String {
        var result = Substring(self)
        while result.last == "\n" { result.removeLast() }
        return String(result)
    }
}
