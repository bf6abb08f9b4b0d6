import Database
import Foundation
import Logging

/// Loads the bundled region catalog (`sql/data/regions.csv.gz`, made by `deploy/regions/generate.py`)
/// with `COPY … FROM STDIN`: regions are upserted by id (so the seeded rows and everything that refers to
/// them stay valid) and their search names replaced. The file's checksum is recorded in `region_catalog`;
/// loading the same file again does nothing. Concurrent loads are serialized by an advisory lock.
public enum RegionCatalog {
    public static let fileName = "regions.csv.gz"

    /// Arbitrary, fixed key for `pg_advisory_xact_lock`: "wbregion" in ASCII.
    static let lockKey: Int = 0x7762_7265_6769_6f6e

    public struct Outcome: Sendable, Equatable {
        /// Regions in the file when it was loaded now; nil when this file was already loaded.
        public var loadedRegions: Int?
    }

    /// The catalog inside a migrations directory: `<sql>/data/regions.csv.gz`.
    public static func file(inMigrationsDirectory directory: URL) -> URL {
        directory.appendingPathComponent("data").appendingPathComponent(fileName)
    }

    /// Loads `file` unless that exact file is already loaded. Must run after the SQL migrations.
    public static func load(file: URL, on pool: PostgresPool, logger: Logger) async throws -> Outcome {
        let path = file.path
        return try await pool.withConnection(timeoutMilliseconds: 120_000) { connection in
            guard let data = FileManager.default.contents(atPath: path) else {
                throw PostgresError(kind: .decoding, message: "the region catalog \(path) is missing or unreadable (regenerate it with deploy/regions/generate.py)")
            }
            let compressed = Array(data)
            let checksum = fnv1a64(compressed)
            try connection.simpleQuery("SET statement_timeout = 0")
            defer { try? connection.simpleQuery("RESET statement_timeout") }
            return try connection.transaction { connection in
                try connection.query("SELECT pg_advisory_xact_lock(\(lockKey))")
                let loaded = try connection.query("SELECT checksum FROM region_catalog")
                if let current = try loaded.first?.decode(String.self, "checksum"), current == checksum {
                    return Outcome(loadedRegions: nil)
                }
                let csv = try gunzip(path: path)
                try connection.simpleQuery("""
                    CREATE TEMP TABLE region_import (
                        id bigint NOT NULL, name_en text NOT NULL, name_ko text, country_code text NOT NULL,
                        lat double precision NOT NULL, lon double precision NOT NULL, timezone text NOT NULL,
                        population bigint NOT NULL, search text[] NOT NULL, "primary" text[] NOT NULL
                    ) ON COMMIT DROP
                    """)
                let count = try connection.copyIn("COPY region_import FROM STDIN (FORMAT csv, HEADER true)", data: csv)
                try connection.simpleQuery("""
                    INSERT INTO regions (id, name_en, name_ko, country_code, lat, lon, timezone, population, position)
                    SELECT id, name_en, name_ko, country_code, lat, lon, timezone, population, region_position(lat, lon)
                    FROM region_import
                    ON CONFLICT (id) DO UPDATE SET
                        name_en = excluded.name_en, name_ko = COALESCE(excluded.name_ko, regions.name_ko),
                        country_code = excluded.country_code, lat = excluded.lat, lon = excluded.lon,
                        timezone = excluded.timezone, population = excluded.population, position = excluded.position;
                    DELETE FROM region_names WHERE region_id IN (SELECT id FROM region_import);
                    INSERT INTO region_names (name, region_id, is_primary, population)
                    SELECT n, id, bool_or(is_primary), max(population) FROM (
                        SELECT n, id, n = ANY ("primary") AS is_primary, population FROM region_import, unnest(search) AS n
                        UNION ALL
                        SELECT n, id, true, population FROM region_import, unnest("primary") AS n
                    ) AS names
                    WHERE n <> ''
                    GROUP BY n, id
                    ORDER BY n COLLATE "C", id;
                    ANALYZE regions;
                    ANALYZE region_names;
                    """)
                try connection.execute("""
                    INSERT INTO region_catalog (singleton, checksum, region_count) VALUES (true, \(checksum), \(count))
                    ON CONFLICT (singleton) DO UPDATE SET checksum = excluded.checksum, region_count = excluded.region_count, loaded_at = now()
                    """)
                logger.info("loaded the region catalog", metadata: ["regions": "\(count)", "file": "\(path)"])
                return Outcome(loadedRegions: count)
            }
        }
    }

    /// 64-bit FNV-1a, hex: enough to tell two catalog files apart.
    static func fnv1a64(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "fnv1a64:" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Decompresses with the system's `gzip` (always present where PostgreSQL runs).
    static func gunzip(path: String) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", "--", path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PostgresError(kind: .decoding, message: "cannot decompress \(path) (gzip exit \(process.terminationStatus))")
        }
        return Array(data)
    }
}
