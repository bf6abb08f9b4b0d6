import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport the walk subscribes to the event streams (`GET /v1/stream`, CONTRACT §11) with, and that it can
/// cut when it is done with them (`close()`).
///
/// On Apple platforms this is `URLSessionTransport` on a session of its own: it streams response bodies there (its
/// platform default), so the generated operation returns once the response head arrives and the body's events come
/// as they are sent, which is what an iOS app gets. swift-openapi-urlsession streams only on Apple platforms: on
/// Linux (FoundationNetworking) `URLSessionTransport` collects the whole body before it returns, which for a stream
/// that stays open is never. There a `URLSessionDataDelegate` does what the Apple transport does: the response on
/// its head, then the body chunk by chunk as an `HTTPBody`; releasing the body (or cancelling the task that reads
/// it) cancels the request.
final class EventStreamTransport: ClientTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var sessions: [URLSession] = []
    private var closed = false

    private static func configuration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        // The longest silence allowed between two chunks: heartbeats come every STREAM_HEARTBEAT_SECONDS (15).
        configuration.timeoutIntervalForRequest = 60
        return configuration
    }

    /// Cancels every request this transport has made (the open streams among them) and refuses new ones.
    func close() {
        let open = lock.withLock {
            closed = true
            defer { sessions.removeAll() }
            return sessions
        }
        for session in open { session.invalidateAndCancel() }
    }

    private func register(_ session: URLSession) throws {
        try lock.withLock {
            guard !closed else { throw EventStreamTransportError.closed }
            sessions.append(session)
        }
    }

    #if canImport(Darwin)
    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let session = URLSession(configuration: Self.configuration())
        try register(session)
        return try await URLSessionTransport(configuration: .init(session: session)).send(request, body: body, baseURL: baseURL, operationID: operationID)
    }
    #else
    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        var urlRequest = try Self.urlRequest(request, baseURL: baseURL)
        if let body { urlRequest.httpBody = try await Data(collecting: body, upTo: 1 << 20) }
        let delegate = StreamingDelegate()
        let session = URLSession(configuration: Self.configuration(), delegate: delegate, delegateQueue: nil)
        try register(session)
        let task = session.dataTask(with: urlRequest)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.start(task, continuation: continuation)
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// `baseURL` with the request's path and query appended, as `URLSessionTransport` builds it; the request's
    /// header fields (repeated names joined with `, `).
    private static func urlRequest(_ request: HTTPRequest, baseURL: URL) throws -> URLRequest {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false), let path = request.path,
            let requestComponents = URLComponents(string: path)
        else { throw EventStreamTransportError.invalidRequestURL(request.path ?? "", baseURL) }
        components.percentEncodedPath += requestComponents.percentEncodedPath
        components.percentEncodedQuery = requestComponents.percentEncodedQuery
        guard let url = components.url else { throw EventStreamTransportError.invalidRequestURL(path, baseURL) }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields { urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
        return urlRequest
    }
    #endif
}

enum EventStreamTransportError: Error, CustomStringConvertible {
    case closed
    case invalidRequestURL(String, URL)
    case notHTTP(URLResponse)
    case noResponse

    var description: String {
        switch self {
        case .closed: "the event stream transport was closed"
        case .invalidRequestURL(let path, let baseURL): "cannot make a URL of \(baseURL) and \(path)"
        case .notHTTP(let response): "not an HTTP response: \(response)"
        case .noResponse: "the request ended without a response"
        }
    }
}

#if !canImport(Darwin)
/// One request's delegate: hands the response over on its head, then feeds the body's chunks to the `HTTPBody`'s
/// stream as they arrive. Its callbacks come on the session's serial delegate queue; `lock` guards the state that
/// `start` (on the caller's thread) and they share.
private final class StreamingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var response: CheckedContinuation<(HTTPResponse, HTTPBody?), any Error>?
    private var body: AsyncThrowingStream<HTTPBody.ByteChunk, any Error>.Continuation?

    func start(_ task: URLSessionDataTask, continuation: CheckedContinuation<(HTTPResponse, HTTPBody?), any Error>) {
        lock.withLock { response = continuation }
        task.resume()
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive urlResponse: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = urlResponse as? HTTPURLResponse else {
            lock.withLock { response.take() }?.resume(throwing: EventStreamTransportError.notHTTP(urlResponse))
            completionHandler(.cancel)
            return
        }
        var fields = HTTPFields()
        for (name, value) in http.allHeaderFields {
            guard let rawName = name as? String, let name = HTTPField.Name(rawName), let value = value as? String else { continue }
            fields.append(HTTPField(name: name, value: value))
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: HTTPBody.ByteChunk.self)
        // The reader let go of the body (released it, or its task was cancelled): end the request.
        continuation.onTermination = { termination in
            if case .cancelled = termination { dataTask.cancel() }
        }
        let pending = lock.withLock {
            body = continuation
            return response.take()
        }
        completionHandler(.allow)
        pending?.resume(returning: (HTTPResponse(status: .init(code: http.statusCode), headerFields: fields), HTTPBody(stream, length: .unknown)))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        _ = lock.withLock { body }?.yield(HTTPBody.ByteChunk(data))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (pending, body) = lock.withLock { (response.take(), self.body.take()) }
        pending?.resume(throwing: error ?? EventStreamTransportError.noResponse)
        body?.finish(throwing: error)
        session.finishTasksAndInvalidate()
    }
}
#endif
