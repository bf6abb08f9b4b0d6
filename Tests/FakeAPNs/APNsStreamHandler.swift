import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One HTTP/2 stream of the fake: collects the request's headers and body, checks them, asks the script, answers.
/// Runs on its stream channel's event loop; the script runs in a task and the answer comes back to the loop.
final class APNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let core: FakeAPNs.Core
    private let connectionID: Int
    private var headers: HPACKHeaders?
    private var body: [UInt8] = []
    private var bodyBytes = 0
    private var ended = false

    init(core: FakeAPNs.Core, connectionID: Int) {
        self.core = core
        self.connectionID = connectionID
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !ended else { return }
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if headers == nil { headers = frame.headers }  // trailers ignored
            if frame.endStream { requestEnded(context: context) }
        case .data(let frame):
            if case .byteBuffer(let buffer) = frame.data {
                bodyBytes += buffer.readableBytes
                let room = FakeAPNs.maxKeptBodyBytes - body.count
                if room > 0 { body.append(contentsOf: buffer.readableBytesView.prefix(room)) }
            }
            if frame.endStream { requestEnded(context: context) }
        default:
            break
        }
    }

    private func requestEnded(context: ChannelHandlerContext) {
        ended = true
        let request = makeRequest()
        let index = core.record(request)
        let apnsID = request.apnsID ?? UUID().uuidString.lowercased()
        if let refusal = core.check(request, bodyBytes: bodyBytes) {
            respond(context: context, .status(refusal.status, reason: refusal.reason), apnsID: apnsID, index: index)
            return
        }
        let script = core.script
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        Task {
            var answer = await script(request)
            while case .delayed(let delay, let next) = answer {
                try? await Task.sleep(for: delay)  // a slow server, on purpose
                answer = next
            }
            let final = answer
            eventLoop.execute {
                let (handler, context) = bound.value
                handler.respond(context: context, final, apnsID: apnsID, index: index)
            }
        }
    }

    /// Records the answer, then sends it: a client that has its answer finds it in the records. An answer to a stream
    /// that is gone is neither sent nor recorded.
    private func respond(context: ChannelHandlerContext, _ answer: FakeAPNs.Answer, apnsID: String, index: Int) {
        // The stream (or its connection) closed while a slow answer waited: nobody hears it, so it is not recorded as
        // answered (a client killed mid-send never got its 200).
        guard context.channel.isActive else { return }
        switch answer {
        case .ok:
            core.answered(index, status: 200)
            let head = HPACKHeaders([(":status", "200"), ("apns-id", apnsID)])
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: head, endStream: true))), promise: nil)
        case .status(let status, let reason, let timestamp):
            var object = #"{"reason":"\#(reason)""#
            if let timestamp { object += #","timestamp":\#(timestamp)"# }
            object += "}"
            core.answered(index, status: status)
            let head = HPACKHeaders([(":status", String(status)), ("apns-id", apnsID), ("content-type", "application/json")])
            context.write(wrapOutboundOut(.headers(.init(headers: head))), promise: nil)
            let buffer = context.channel.allocator.buffer(string: object)
            context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
        case .resetStream:
            core.answered(index, status: nil)
            context.writeAndFlush(wrapOutboundOut(.rstStream(.internalError)), promise: nil)
        case .closeConnection:
            core.answered(index, status: nil)
            context.channel.parent?.close(promise: nil)
        case .delayed(_, let next):
            respond(context: context, next, apnsID: apnsID, index: index)
        }
    }

    private func makeRequest() -> FakeAPNs.Request {
        var method = ""
        var path = ""
        var fields: [(String, String)] = []
        for (name, value, _) in headers ?? [:] {
            switch name {
            case ":method": method = value
            case ":path": path = value
            default: if !name.hasPrefix(":") { fields.append((name.lowercased(), value)) }
            }
        }
        func field(_ name: String) -> String? { fields.first { $0.0 == name }?.1 }
        let prefix = "/3/device/"
        let deviceToken = path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : ""
        var jwt: String?
        if let authorization = field("authorization"), authorization.lowercased().hasPrefix("bearer ") {
            jwt = String(authorization.dropFirst("bearer ".count))
        }
        return FakeAPNs.Request(
            deviceToken: deviceToken, method: method, path: path, headers: fields, apnsID: field("apns-id"),
            collapseID: field("apns-collapse-id"), priority: field("apns-priority"), expiration: field("apns-expiration"),
            topic: field("apns-topic"), pushType: field("apns-push-type"), jwt: jwt, payload: body, connectionID: connectionID,
            receivedAtMilliseconds: Int64(Date().timeIntervalSince1970 * 1000), answeredStatus: nil
        )
    }
}
