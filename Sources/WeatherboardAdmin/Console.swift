import Foundation

/// Standard output and error, line by line.
enum Console {
    /// Prints to standard output.
    static func out(_ text: String = "", terminator: String = "\n") {
        FileHandle.standardOutput.write(Data((text + terminator).utf8))
    }

    /// Prints one line to standard error; newlines inside become spaces so it stays one line.
    static func error(_ text: String) {
        let line = text.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Writes raw bytes (a server's JSON) to standard output, ending with a newline.
    static func raw(_ bytes: [UInt8]) {
        var data = Data(bytes)
        if data.last != UInt8(ascii: "\n") { data.append(UInt8(ascii: "\n")) }
        FileHandle.standardOutput.write(data)
    }
}
