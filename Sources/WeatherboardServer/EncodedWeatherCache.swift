import Foundation
import NIOCore
import Synchronization
import Vocabulary
import Weather
import WeatherboardAPI

/// The JSON of the last weather answer per region, units and language, reused while the weather service
/// returns the same observation (same `fetchedAt` and `stale`): the cached route then costs no encoding.
final class EncodedWeatherCache: Sendable {
    private struct Key: Hashable {
        var regionID: String
        var units: Units
        var language: Language
    }

    private struct Entry {
        var fetchedAt: Date
        var stale: Bool
        var body: ByteBuffer
    }

    private let entries = Mutex<[Key: Entry]>([:])

    /// The encoded body of `weather`, from the cache when it holds this very observation.
    func body(for weather: CurrentWeather, language: Language) throws -> ByteBuffer {
        let key = Key(regionID: weather.regionId, units: weather.units, language: language)
        if let entry = entries.withLock({ $0[key] }), entry.fetchedAt == weather.fetchedAt, entry.stale == weather.stale {
            return entry.body
        }
        var writer = JSONWriter(capacity: 512)
        weather.write(to: &writer)
        let body = ByteBuffer(bytes: writer.bytes)
        entries.withLock { $0[key] = Entry(fetchedAt: weather.fetchedAt, stale: weather.stale, body: body) }
        return body
    }
}
