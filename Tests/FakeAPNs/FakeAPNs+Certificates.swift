import Foundation
import NIOPosix

extension FakeAPNs {
    /// The fake's certificate authority and server certificate, made with the `openssl` command in a directory of their
    /// own. The commands run on NIO's blocking pool, never on Swift's cooperative pool.
    enum Certificates {
        struct Files {
            var directory: String
            var caFile: String
            var serverCertificate: [UInt8]
            var serverKey: [UInt8]
        }

        /// `authority`: the directory of another fake whose CA signs this one's certificate (so one `APNS_CA_FILE` trusts
        /// both); nil: a CA of its own.
        static func make(authority: String? = nil) async throws -> Files {
            try await NIOThreadPool.singleton.runIfActive {
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-\(UUID().uuidString)").path
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                do {
                    let extensions = "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n"
                    try Data(extensions.utf8).write(to: URL(fileURLWithPath: directory + "/server.ext"))
                    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
                    let ca = authority ?? directory
                    if authority == nil {
                        try openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=FakeAPNs test CA"], in: directory)
                    }
                    try openssl(["req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"], in: directory)
                    try openssl(
                        ["x509", "-req", "-in", "server.csr", "-CA", ca + "/ca.pem", "-CAkey", ca + "/ca.key", "-set_serial", String(UInt32.random(in: 1...UInt32.max)),
                         "-out", "server.pem", "-days", "2", "-extfile", "server.ext"],
                        in: directory)
                    return Files(
                        directory: directory,
                        caFile: ca + "/ca.pem",
                        serverCertificate: Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/server.pem"))),
                        serverKey: Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/server.key")))
                    )
                } catch {
                    try? FileManager.default.removeItem(atPath: directory)
                    throw error
                }
            }
        }

        static func remove(_ directory: String) async throws {
            try await NIOThreadPool.singleton.runIfActive {
                try FileManager.default.removeItem(atPath: directory)
            }
        }

        struct OpenSSLFailed: Error, CustomStringConvertible {
            var arguments: [String]
            var status: Int32
            var output: String
            var description: String { "openssl \(arguments.joined(separator: " ")) exited \(status): \(output)" }
        }

        /// Runs `/usr/bin/openssl` in `directory` and waits (on the calling pool thread).
        private static func openssl(_ arguments: [String], in directory: String) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let text = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw OpenSSLFailed(arguments: arguments, status: process.terminationStatus, output: String(decoding: text, as: UTF8.self))
            }
        }
    }
}
