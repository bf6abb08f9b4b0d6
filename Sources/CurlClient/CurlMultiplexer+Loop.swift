import CCurl
import Foundation

extension CurlMultiplexer {
    /// What the multiplexer's thread owns: the transfers in libcurl (by easy handle) and those waiting for a place.
    /// Used only on that thread.
    final class Loop: @unchecked Sendable {
        let multiplexer: CurlMultiplexer
        let extraCAFile: String?
        var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
        var waiting: [CurlTransfer] = []
        var waitingHead = 0
        /// The CA bundle every transfer trusts (system + extra), kept until the thread ends (libcurl does not copy it).
        var trust: UnsafeMutableRawBufferPointer?
        /// Why trust could not be built (the extra CA file unreadable): every transfer fails with it.
        var trustFailure: CurlError?

        init(multiplexer: CurlMultiplexer, extraCAFile: String?) {
            self.multiplexer = multiplexer
            self.extraCAFile = extraCAFile
        }

        func run() {
            buildTrust()
            let multi = multiplexer.multiPointer
            while true {
                let inbox = multiplexer.takeInbox()
                for transfer in inbox.submitted {
                    multiplexer.counters.queued.add(-1, ordering: .relaxed)
                    if transfer.isCancelled {
                        transfer.finish(.failure(CancellationError()))
                    } else {
                        waiting.append(transfer)
                    }
                }
                for transfer in inbox.cancelled { cancel(transfer) }
                if inbox.stopping { break }
                startWaiting()
                var stillRunning: Int32 = 0
                _ = curl_multi_perform(multi, &stillRunning)
                collectFinished()
                startWaiting()
                // Woken by curl_multi_wakeup; the timeout is only libcurl's own timers' fallback.
                _ = curl_multi_poll(multi, nil, 0, 1000, nil)
            }
            stop()
        }

        /// Moves waiting transfers into libcurl while there is room.
        private func startWaiting() {
            while running.count < multiplexer.maxConcurrentTransfers, waitingHead < waiting.count {
                let transfer = waiting[waitingHead]
                waitingHead += 1
                start(transfer)
            }
            if waitingHead > 0, waitingHead == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                waitingHead = 0
            } else if waitingHead > 1024 {
                waiting.removeFirst(waitingHead)
                waitingHead = 0
            }
        }

        private func start(_ transfer: CurlTransfer) {
            if let trustFailure {
                transfer.finish(.failure(trustFailure))
                return
            }
            guard let easy = curl_easy_init() else {
                transfer.finish(.failure(CurlError(code: -1, message: "curl_easy_init failed")))
                return
            }
            transfer.easy = easy
            do {
                try configure(transfer, easy)
            } catch {
                transfer.release()
                transfer.finish(.failure(error))
                return
            }
            guard curl_multi_add_handle(multiplexer.multiPointer, easy) == CURLM_OK else {
                transfer.release()
                transfer.finish(.failure(CurlError(code: -1, message: "curl_multi_add_handle failed")))
                return
            }
            running[easy] = transfer
            multiplexer.counters.inFlight.add(1, ordering: .relaxed)
        }

        private func configure(_ transfer: CurlTransfer, _ easy: UnsafeMutableRawPointer) throws {
            let request = transfer.request
            transfer.headerList = try CurlHTTPClient.setRequestOptions(request, on: easy)
            let check = CurlHTTPClient.check
            try check(wb_curl_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS))
            try check(wb_curl_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
            try check(wb_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, request.timeoutMilliseconds))
            if let trust, let base = trust.baseAddress {
                try check(wb_curl_setopt_cainfo_blob(easy, base, trust.count))
            }
            if let body = request.body {
                try check(wb_curl_setopt_long(easy, CURLOPT_POSTFIELDSIZE, body.count))
                // Copied by libcurl, so the bytes need not outlive this call (an empty body: one byte, none read).
                let bytes = body.isEmpty ? [0] : body
                try bytes.withUnsafeBytes { raw in
                    try check(wb_curl_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress!)))
                }
            }
            if !request.truncatesResponseBody {
                try check(wb_curl_setopt_long(easy, CURLOPT_MAXFILESIZE, request.maxResponseBytes))
            }
            let sink = Unmanaged.passUnretained(transfer.sink).toOpaque()
            try check(wb_curl_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION) { data, size, count, user in
                let sink = Unmanaged<CurlTransferSink>.fromOpaque(user!).takeUnretainedValue()
                let length = size * count
                guard let data, length > 0 else { return length }
                return sink.take(UnsafeRawBufferPointer(start: data, count: length))
            })
            try check(wb_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, sink))
            try check(wb_curl_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION) { data, size, count, user in
                let sink = Unmanaged<CurlTransferSink>.fromOpaque(user!).takeUnretainedValue()
                let length = size * count
                guard let data, length > 0 else { return length }
                return sink.addHeaderLine(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
            })
            try check(wb_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, sink))
        }

        /// Reads libcurl's finished transfers and resumes their callers.
        private func collectFinished() {
            var left: Int32 = 0
            while let message = curl_multi_info_read(multiplexer.multiPointer, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = wb_curl_msg_result(message)
                guard let transfer = remove(easy) else { continue }
                var status = 0
                _ = wb_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
                var connects = 0
                _ = wb_curl_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
                multiplexer.counters.connectionsOpened.add(connects, ordering: .relaxed)
                transfer.release()
                let sink = transfer.sink
                if sink.tooLarge || code == CURLE_FILESIZE_EXCEEDED {
                    let limit = transfer.request.maxResponseBytes
                    transfer.finish(.failure(CurlError(code: CurlError.tooLargeCode, message: "response larger than \(limit) bytes")))
                } else if code != CURLE_OK {
                    transfer.finish(.failure(CurlError(code: Int(code.rawValue), message: String(cString: curl_easy_strerror(code)))))
                } else {
                    transfer.finish(.success(CurlResponse(status: status, headers: sink.headers, body: sink.body)))
                }
            }
        }

        /// Takes the transfer on `easy` out of libcurl; nil if it is not there.
        private func remove(_ easy: UnsafeMutableRawPointer) -> CurlTransfer? {
            guard let transfer = running.removeValue(forKey: easy) else { return nil }
            _ = curl_multi_remove_handle(multiplexer.multiPointer, easy)
            multiplexer.counters.inFlight.add(-1, ordering: .relaxed)
            return transfer
        }

        private func cancel(_ transfer: CurlTransfer) {
            if let easy = transfer.easy, remove(easy) != nil {
                transfer.release()
            } else if let index = waiting[waitingHead...].firstIndex(where: { $0 === transfer }) {
                waiting.remove(at: index)
            }
            transfer.finish(.failure(CancellationError()))
        }

        /// Fails everything still here, closes the connections and frees the multi handle.
        private func stop() {
            let failure = CurlError(code: -1, message: "the multiplexer is shut down")
            for (easy, transfer) in running {
                _ = curl_multi_remove_handle(multiplexer.multiPointer, easy)
                multiplexer.counters.inFlight.add(-1, ordering: .relaxed)
                transfer.release()
                transfer.finish(.failure(failure))
            }
            running.removeAll()
            for transfer in waiting[waitingHead...] { transfer.finish(.failure(failure)) }
            waiting.removeAll()
            curl_multi_cleanup(multiplexer.multiPointer)
            trust?.deallocate()
            trust = nil
            multiplexer.threadDidEnd()
        }

        /// The system's CA bundle (where libcurl looks by default, else Debian's path) followed by the extra CA file.
        private func buildTrust() {
            guard let extraCAFile else { return }  // libcurl's defaults alone
            guard let extra = FileManager.default.contents(atPath: extraCAFile), !extra.isEmpty else {
                trustFailure = CurlError(code: 77, message: "the extra CA file \(extraCAFile) could not be read")
                return
            }
            var bundle = Data()
            if let system = FileManager.default.contents(atPath: Self.systemBundlePath()) {
                bundle.append(system)
                bundle.append(UInt8(ascii: "\n"))
            }
            bundle.append(extra)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bundle.count, alignment: 1)
            buffer.copyBytes(from: bundle)
            trust = buffer
        }

        /// libcurl's built-in CA bundle (`CURLINFO_CAINFO`, curl ≥ 7.84), or Debian's.
        static func systemBundlePath() -> String {
            if let easy = curl_easy_init() {
                defer { curl_easy_cleanup(easy) }
                var path: UnsafeMutablePointer<CChar>?
                if wb_curl_getinfo_string(easy, CURLINFO_CAINFO, &path) == CURLE_OK, let path {
                    return String(cString: path)
                }
            }
            return "/etc/ssl/certs/ca-certificates.crt"
        }
    }
}
