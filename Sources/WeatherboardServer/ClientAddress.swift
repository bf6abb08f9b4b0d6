import Foundation
import NIOCore

/// Finds the client for rate limits: the socket peer, unless the peer is a trusted proxy, in which case
/// the right-most `X-Forwarded-For` entry that is not itself a trusted proxy. An IPv6 client is its /64
/// (one subscriber gets a whole /64 and picks addresses in it at will), written `2001:db8:1:2::/64`; an IPv4
/// client is its dotted quad, however it was spelled (`::ffff:1.2.3.4` and `::ffff:102:304` are `1.2.3.4`), so a
/// dual-stack listener or proxy never gives one client two buckets.
struct ClientAddress: Sendable {
    let trusted: [IPRange]

    init(trustedProxies: [String]) {
        self.trusted = trustedProxies.compactMap(IPRange.init)
    }

    /// The client as rate limits see it, and whether the peer is a trusted proxy (whose other forwarded headers,
    /// `X-Forwarded-Proto` and `Host`, are then believed too).
    func resolve(peer: SocketAddress?, forwardedFor: String?) -> (client: String, viaTrustedProxy: Bool) {
        let peerIP = peer?.ipAddress
        let trustedPeer = peerIP.map { isTrusted($0) } ?? false
        let ip = address(peerIP: peerIP, trustedPeer: trustedPeer, forwardedFor: forwardedFor)
        guard let bytes = IPRange.bytes(of: ip) else { return (ip, trustedPeer) }
        return (Self.limitSubject(bytes), trustedPeer)
    }

    /// The canonical subject of an address's bytes: the dotted quad of IPv4 (including IPv4-mapped IPv6, which
    /// `bytes(of:)` unmaps), the /64 of IPv6.
    static func limitSubject(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map { String($0) }.joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    private func address(peerIP: String?, trustedPeer: Bool, forwardedFor: String?) -> String {
        guard let peerIP else { return "unknown" }
        guard trustedPeer, let forwardedFor else { return peerIP }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for hop in hops.reversed() {
            guard IPRange.bytes(of: hop) != nil else { return peerIP }  // garbage: don't believe any of it
            if !isTrusted(hop) { return hop }
        }
        return hops.first ?? peerIP
    }

    func isTrusted(_ ip: String) -> Bool {
        guard let bytes = IPRange.bytes(of: ip) else { return false }
        return trusted.contains { $0.contains(bytes) }
    }
}

/// An address or CIDR range, IPv4 or IPv6 (`10.0.0.0/8`, `127.0.0.1`, `::1`).
struct IPRange: Sendable {
    let network: [UInt8]
    let prefixLength: Int

    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let bytes = Self.bytes(of: String(first)) else { return nil }
        let bits = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
        guard let bits, bits >= 0, bits <= bytes.count * 8 else { return nil }
        self.network = bytes
        self.prefixLength = bits
    }

    func contains(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == network.count else { return false }
        var remaining = prefixLength
        for i in 0..<bytes.count where remaining > 0 {
            let take = min(8, remaining)
            let mask: UInt8 = take == 8 ? 0xff : ~(0xff >> UInt8(take))
            if bytes[i] & mask != network[i] & mask { return false }
            remaining -= take
        }
        return true
    }

    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            // IPv4-mapped IPv6 (::ffff:a.b.c.d) compares as IPv4.
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                return Array(bytes[12...])
            }
            return bytes
        }
        return nil
    }
}
