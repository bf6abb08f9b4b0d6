import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The terminal settings to put back if the user interrupts while echo or line editing is off.
/// Written only by the main flow before the handler is installed, read by the signal handler.
nonisolated(unsafe) private var savedTerminal = termios()
nonisolated(unsafe) private var terminalModified: sig_atomic_t = 0

/// Standard input: a terminal (no-echo password, single keys) or a plain stream of lines.
enum Terminal {
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 }

    /// Prints a prompt without a newline (to standard error, so `--json` output stays clean).
    static func prompt(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// One line from standard input without its line ending; nil at end of input.
    static func readLine() -> String? {
        guard var line = Swift.readLine(strippingNewline: true) else { return nil }
        if line.hasSuffix("\r") { line.removeLast() }
        return line
    }

    /// Reads a password from the terminal with echo off.
    static func readPassword(prompt text: String) throws -> String {
        guard isInteractive else {
            throw AdminError(.usage, "cannot prompt for a password: standard input is not a terminal (use --password-stdin)")
        }
        prompt(text)
        let line = try withTerminal(discardTypeAhead: true, { $0.c_lflag &= ~tcflag_t(ECHO) }) { readLine() }
        prompt("\n")
        guard let line else { throw AdminError(.usage, "no password given") }
        return line
    }

    /// Reads one key press without waiting for Return (the terminal is in non-canonical mode meanwhile);
    /// nil at end of input. Ctrl-C still interrupts, and the terminal is restored.
    static func readKey() throws -> Character? {
        try withTerminal(discardTypeAhead: false, { settings in
            settings.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &settings.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
        }) {
            var byte: UInt8 = 0
            while true {
                let count = read(STDIN_FILENO, &byte, 1)
                if count == 1 { break }
                if count < 0 && errno == EINTR { continue }
                return nil
            }
            if byte == 4 { return nil }  // Ctrl-D
            return Character(Unicode.Scalar(byte))
        }
    }

    /// Runs `body` with modified terminal settings, restoring them afterwards and on SIGINT/SIGTERM.
    /// A password prompt discards what was typed ahead; single keys keep it, so a fast reviewer loses nothing.
    private static func withTerminal<T>(discardTypeAhead: Bool, _ change: (inout termios) -> Void, _ body: () throws -> T) throws -> T {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return try body() }
        savedTerminal = original
        terminalModified = 1
        let restoreAndExit: @convention(c) (Int32) -> Void = { received in
            if terminalModified != 0 { _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &savedTerminal) }
            _ = write(STDERR_FILENO, "\n", 1)
            _exit(128 + received)
        }
        let oldInt = signal(SIGINT, restoreAndExit)
        let oldTerm = signal(SIGTERM, restoreAndExit)
        defer {
            _ = tcsetattr(STDIN_FILENO, TCSANOW, &original)
            terminalModified = 0
            _ = signal(SIGINT, oldInt)
            _ = signal(SIGTERM, oldTerm)
        }
        var modified = original
        change(&modified)
        _ = tcsetattr(STDIN_FILENO, discardTypeAhead ? TCSAFLUSH : TCSANOW, &modified)
        return try body()
    }
}
