import CurlClient
import Testing

/// `CurlHTTPClient` keeps its easy handles, and so their connections, between requests.
@Suite struct CurlConnectionReuseTests {
    @Test("requests one after another to the same server go over one TCP connection")
    func sequentialRequestsShareOneConnection() async throws {
        // A client of its own: another test's requests on a shared client could take the idle handle in between.
        let client = CurlHTTPClient(threads: 4)
        try await RecordingServer.with(reply: .init(status: 200, body: Array("ok".utf8))) { server, port in
            let count = 12
            for index in 0..<count {
                let method = ["GET", "PUT", "DELETE", "HEAD"][index % 4]
                let response = try await client.send(
                    CurlRequest(method: method, url: "http://127.0.0.1:\(port)/bucket/\(index)", body: method == "PUT" ? [1, 2, 3] : nil)
                )
                #expect(response.status == 200)
            }
            #expect(server.requests.count == count)
            #expect(server.connectionCount == 1)
        }
        await client.shutdown()
    }

    @Test("requests at once each take a handle of their own: no more connections than the pool has threads")
    func concurrentRequestsAreBounded() async throws {
        let client = CurlHTTPClient(threads: 2)
        try await RecordingServer.with(reply: .init(status: 200, body: [])) { server, port in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    group.addTask { try await client.send(CurlRequest(url: "http://127.0.0.1:\(port)/\(index)")).status }
                }
                for try await status in group { #expect(status == 200) }
            }
            #expect(server.requests.count == 8)
            // Two threads: never more than two transfers, so never more than two connections.
            #expect(server.connectionCount <= 2)
        }
        await client.shutdown()
    }
}
