#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// BlurHash encoder, after the published algorithm (woltapp/blurhash, `Algorithm.md`): a DCT of the image in
/// linear light keeping `componentsX × componentsY` components; the average colour (DC) stored as sRGB in
/// 4 base-83 digits, the other components (AC) scaled by their quantised maximum (`(q + 1) / 166`) and
/// stored as 19 levels per channel in 2 digits each.
///
/// Arithmetic is `Double` in the same order as the reference encoders (sum over rows, then columns), so the
/// result matches them digit for digit; the tests check it against an independent implementation.
public enum BlurHash {
    /// The hash of `height` rows of `width` pixels of 8-bit sRGB, 3 bytes a pixel, rows `bytesPerRow` apart.
    /// `nil` if the sizes don't fit the buffer or a component count is outside 1...9.
    public static func encode(
        rgb pixels: [UInt8],
        width: Int,
        height: Int,
        bytesPerRow: Int? = nil,
        componentsX: Int = 4,
        componentsY: Int = 3
    ) -> String? {
        let rowStride = bytesPerRow ?? width &* 3
        guard (1...9).contains(componentsX), (1...9).contains(componentsY),
              width > 0, height > 0, width <= 1 << 20, height <= 1 << 20, rowStride >= width * 3
        else { return nil }
        let (lastRow, overflow) = rowStride.multipliedReportingOverflow(by: height - 1)
        guard !overflow, lastRow <= pixels.count - width * 3 else { return nil }

        let factors = pixels.withUnsafeBufferPointer { buffer in
            computeFactors(buffer, width: width, height: height, rowStride: rowStride, componentsX: componentsX, componentsY: componentsY)
        }

        var hash = ""
        hash.reserveCapacity(4 + 2 * componentsX * componentsY)
        appendBase83((componentsX - 1) + (componentsY - 1) * 9, length: 1, to: &hash)

        let dc = factors[0]
        let ac = factors.dropFirst()
        let maximumValue: Double
        if ac.isEmpty {
            maximumValue = 1
            appendBase83(0, length: 1, to: &hash)
        } else {
            var actualMaximum = 0.0
            for factor in ac {
                actualMaximum = Swift.max(actualMaximum, abs(factor.r), abs(factor.g), abs(factor.b))
            }
            let quantised = clampedInt((actualMaximum * 166 - 0.5).rounded(.down), upperBound: 82)
            maximumValue = Double(quantised + 1) / 166
            appendBase83(quantised, length: 1, to: &hash)
        }

        appendBase83((linearToSRGB(dc.r) << 16) + (linearToSRGB(dc.g) << 8) + linearToSRGB(dc.b), length: 4, to: &hash)
        for factor in ac {
            let r = quantiseAC(factor.r, maximumValue: maximumValue)
            let g = quantiseAC(factor.g, maximumValue: maximumValue)
            let b = quantiseAC(factor.b, maximumValue: maximumValue)
            appendBase83(r * 19 * 19 + g * 19 + b, length: 2, to: &hash)
        }
        return hash
    }

    struct Factor {
        var r = 0.0
        var g = 0.0
        var b = 0.0
    }

    private static func computeFactors(
        _ pixels: UnsafeBufferPointer<UInt8>,
        width: Int,
        height: Int,
        rowStride: Int,
        componentsX: Int,
        componentsY: Int
    ) -> [Factor] {
        let w = Double(width)
        let h = Double(height)
        // cos(π·i·x / width) for every component i and column x; likewise per row.
        var cosX = [Double](repeating: 0, count: componentsX * width)
        for i in 0..<componentsX {
            for x in 0..<width { cosX[i * width + x] = cos(Double.pi * Double(i) * Double(x) / w) }
        }
        var cosY = [Double](repeating: 0, count: componentsY * height)
        for j in 0..<componentsY {
            for y in 0..<height { cosY[j * height + y] = cos(Double.pi * Double(j) * Double(y) / h) }
        }
        let linear = sRGBToLinearTable
        var factors: [Factor] = []
        factors.reserveCapacity(componentsX * componentsY)
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                let normalisation: Double = (i == 0 && j == 0) ? 1 : 2
                var factor = Factor()
                for y in 0..<height {
                    let cy = cosY[j * height + y]
                    let row = y * rowStride
                    for x in 0..<width {
                        let basis = normalisation * cosX[i * width + x] * cy
                        let p = row + x * 3
                        factor.r += basis * linear[Int(pixels[p])]
                        factor.g += basis * linear[Int(pixels[p + 1])]
                        factor.b += basis * linear[Int(pixels[p + 2])]
                    }
                }
                let scale = w * h
                factor.r /= scale
                factor.g /= scale
                factor.b /= scale
                factors.append(factor)
            }
        }
        return factors
    }

    /// sRGB byte → linear light, for all 256 values.
    static let sRGBToLinearTable: [Double] = (0...255).map { value in
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// Linear light → sRGB byte (0...255); anything not finite counts as 0.
    static func linearToSRGB(_ value: Double) -> Int {
        guard value.isFinite else { return 0 }
        let v = Swift.max(0, Swift.min(1, value))
        let scaled = v <= 0.0031308 ? v * 12.92 * 255 + 0.5 : (1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5
        return clampedInt(scaled.rounded(.towardZero), upperBound: 255)
    }

    private static func quantiseAC(_ value: Double, maximumValue: Double) -> Int {
        let scaled = value / maximumValue
        let signPow = Double(signOf: scaled, magnitudeOf: pow(abs(scaled), 0.5))
        return clampedInt((signPow * 9 + 9.5).rounded(.down), upperBound: 18)
    }

    /// `value` (already integral) as an Int in 0...upperBound; NaN counts as 0. Never traps.
    private static func clampedInt(_ value: Double, upperBound: Int) -> Int {
        guard value.isFinite, value > 0 else { return 0 }
        return value >= Double(upperBound) ? upperBound : Int(value)
    }

    private static let base83: [Character] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    private static func appendBase83(_ value: Int, length: Int, to hash: inout String) {
        var divisor = 1
        for _ in 1..<Swift.max(length, 1) { divisor *= 83 }
        for _ in 0..<length {
            hash.append(base83[(value / divisor) % 83])
            divisor /= 83
        }
    }
}
