import Logging

/// Process-wide logging to stderr, as text or JSON lines (`LOG_FORMAT=json`), at `LOG_LEVEL`.
public enum LogSetup {
    /// Call once, at start-up, before any logger is made.
    public static func bootstrap(configuration: AppConfiguration, label: String) -> Logger {
        let level = configuration.logLevel
        let json = configuration.logFormat == "json"
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : TextLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }
}
