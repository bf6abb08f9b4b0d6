import Foundation

/// The KMA (기상청) forecast grid: latitude/longitude → (nx, ny) by the Lambert conformal conic
/// projection of the 동네예보 grid (RE 6371.00877 km, GRID 5 km, SLAT1 30°, SLAT2 60°, OLON 126°, OLAT 38°,
/// XO 43, YO 136), as in KMA's published conversion code.
public enum KMAGrid {
    public struct Point: Sendable, Equatable, CustomStringConvertible {
        public var nx: Int
        public var ny: Int
        public init(nx: Int, ny: Int) {
            self.nx = nx
            self.ny = ny
        }
        public var description: String { "(\(nx), \(ny))" }
    }

    /// The grid covers roughly 1…149 × 1…253; points outside are not served by KMA.
    public static let validX = 1...149
    public static let validY = 1...253

    public static func point(lat: Double, lon: Double) -> Point {
        let re = 6371.00877 / 5.0
        let degrad = Double.pi / 180
        let slat1 = 30.0 * degrad
        let slat2 = 60.0 * degrad
        let olon = 126.0 * degrad
        let olat = 38.0 * degrad
        var sn = tan(Double.pi * 0.25 + slat2 * 0.5) / tan(Double.pi * 0.25 + slat1 * 0.5)
        sn = log(cos(slat1) / cos(slat2)) / log(sn)
        var sf = tan(Double.pi * 0.25 + slat1 * 0.5)
        sf = pow(sf, sn) * cos(slat1) / sn
        var ro = tan(Double.pi * 0.25 + olat * 0.5)
        ro = re * sf / pow(ro, sn)
        var ra = tan(Double.pi * 0.25 + lat * degrad * 0.5)
        ra = re * sf / pow(ra, sn)
        var theta = lon * degrad - olon
        if theta > Double.pi { theta -= 2 * Double.pi }
        if theta < -Double.pi { theta += 2 * Double.pi }
        theta *= sn
        let x = floor(ra * sin(theta) + 43 + 0.5)
        let y = floor(ro - ra * cos(theta) + 136 + 0.5)
        // Only a point inside the grid is meaningful; anything else (a pole, a non-finite coordinate) becomes
        // (0, 0), which is outside `validX`/`validY`, instead of trapping in `Int(Double)`.
        guard x.isFinite, y.isFinite, abs(x) < 1_000_000, abs(y) < 1_000_000 else { return Point(nx: 0, ny: 0) }
        return Point(nx: Int(x), ny: Int(y))
    }
}
