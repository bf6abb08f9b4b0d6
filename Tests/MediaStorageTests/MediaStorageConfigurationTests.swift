import MediaStorage
import Testing

@Suite struct MediaStorageConfigurationTests {
    @Test func localIsTheDefault() throws {
        let configuration = try MediaStorageConfiguration(
            environment: [:], defaultDirectory: ".local/media", defaultPublicBaseURL: "http://127.0.0.1:8080/media/"
        )
        #expect(configuration.backend == .local)
        #expect(configuration.directory == ".local/media")
        #expect(configuration.publicBaseURL == "http://127.0.0.1:8080/media/")
        #expect(configuration.makeStore(io: testIO) is LocalMediaStore)
    }

    @Test func s3NeedsItsVariables() throws {
        let complete = [
            "MEDIA_STORAGE": "s3", "MEDIA_PUBLIC_BASE_URL": "https://cdn.example.test/", "S3_ENDPOINT": "https://s3.example.test",
            "S3_BUCKET": "media", "S3_REGION": "eu-central-1", "S3_ACCESS_KEY_ID": "AKID", "S3_SECRET_ACCESS_KEY": "secret",
        ]
        let configuration = try MediaStorageConfiguration(environment: complete, defaultDirectory: "m", defaultPublicBaseURL: "http://x/media/")
        #expect(configuration.backend == .s3)
        #expect(configuration.s3?.bucket == "media")
        #expect(configuration.s3?.region == "eu-central-1")
        let store = configuration.makeStore(io: testIO)
        #expect(store is S3MediaStore)
        #expect(store.publicURL(for: "public/a.jpg") == "https://cdn.example.test/public/a.jpg")

        for name in ["MEDIA_PUBLIC_BASE_URL", "S3_ENDPOINT", "S3_BUCKET", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"] {
            var environment = complete
            environment[name] = nil
            #expect(throws: MediaStorageConfiguration.InvalidValue.self, "\(name)") {
                try MediaStorageConfiguration(environment: environment, defaultDirectory: "m", defaultPublicBaseURL: "http://x/media/")
            }
        }
        var relative = complete
        relative["S3_ENDPOINT"] = "s3.example.test"
        #expect(throws: MediaStorageConfiguration.InvalidValue.self) {
            try MediaStorageConfiguration(environment: relative, defaultDirectory: "m", defaultPublicBaseURL: "http://x/media/")
        }
    }

    @Test func unknownBackendIsRefused() {
        #expect(throws: MediaStorageConfiguration.InvalidValue.self) {
            try MediaStorageConfiguration(environment: ["MEDIA_STORAGE": "ftp"], defaultDirectory: "m", defaultPublicBaseURL: "http://x/")
        }
    }
}
