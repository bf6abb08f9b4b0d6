import Foundation
import OpenAPIRuntime
import OpenAPIURLSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an iOS developer does with weatherboard: the main flows through the client that swift-openapi-generator
/// made from the served `openapi.yaml`, over `URLSessionTransport`, against a live server. The event streams
/// (CONTRACT §11) go over `EventStreamTransport`, which streams response bodies on Linux too.
///
///     ClientWalk BASE_URL        e.g. http://127.0.0.1:18385
///
/// Every step must get a documented answer that the generated types decode; an undocumented status (the
/// generated `.undocumented` case), an unexpected one or an undecodable body fails the walk (exit 1).
@main
struct ClientWalk {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count == 2, let serverURL = URL(string: arguments[1]) else {
            FileHandle.standardError.write(Data("usage: ClientWalk BASE_URL\n".utf8))
            exit(2)
        }
        do {
            let steps = try await ClientWalk(serverURL: serverURL).walk()
            print("generated client walk: \(steps) steps passed against \(serverURL)")
        } catch {
            FileHandle.standardError.write(Data("generated client walk FAILED: \(error)\n".utf8))
            exit(1)
        }
    }

    let serverURL: URL
    let transport = URLSessionTransport()

    /// A client without a token, or signed in with `token`.
    func client(token: String? = nil) -> Client {
        Client(serverURL: serverURL, transport: transport, middlewares: token.map { [BearerMiddleware(token: $0)] } ?? [])
    }

    /// Walks the flows; returns the number of steps taken.
    func walk() async throws -> Int {
        typealias W = WalkFailure
        var steps = 0
        func done(_ name: String) {
            steps += 1
            print("ok  \(name)")
        }
        let anonymous = client()

        let health = try await W.step("healthz", { try await anonymous.healthz() }, expect: { try $0.ok.body.json })
        try W.check(health.status == .ok, "healthz", "status \(health.status)")
        done("healthz")

        // Pickers: the vocabularies, localized.
        let types = try await W.step("listWeatherTypes", { try await anonymous.listWeatherTypes(headers: .init(acceptLanguage: "en")) }, expect: { try $0.ok.body.json })
        try W.check(types.items.contains { $0.id == "rain" } && types.nextCursor == nil, "listWeatherTypes", "\(types)")
        let categories = try await W.step("listCategories", { try await anonymous.listCategories() }, expect: { try $0.ok.body.json })
        try W.check(categories.items.map(\.id).contains("food"), "listCategories", "\(categories)")
        done("vocabularies")

        // 1. An anonymous account, created with an Idempotency-Key (a UUID) so a retry cannot make a second one.
        let key = UUID().uuidString
        let created = try await W.step(
            "createAccount", { try await anonymous.createAccount(headers: .init(idempotencyKey: key)) }, expect: { try $0.created.body.json }
        )
        try W.check(created.account.kind == .anonymous && created.account.username == nil, "createAccount", "\(created.account)")
        let replay = try await W.step(
            "createAccount (replay)", { try await anonymous.createAccount(headers: .init(idempotencyKey: key)) }, expect: { try $0.ok.body.json }
        )
        try W.check(replay.account.id == created.account.id && replay.token != created.token, "createAccount (replay)", "\(replay.account)")
        let author = client(token: created.token)
        let me = try await W.step("getMe", { try await author.getMe() }, expect: { try $0.ok.body.json })
        try W.check(me.id == created.account.id && me.role == .member && !me.banned, "getMe", "\(me)")
        done("anonymous account with Idempotency-Key (201, replay 200)")

        // 2. A region, by name and by position.
        let found = try await W.step(
            "searchRegions", { try await anonymous.searchRegions(query: .init(q: "seoul", limit: 5)) }, expect: { try $0.ok.body.json }
        )
        guard let seoul = found.items.first else { throw W(step: "searchRegions", detail: "no region for 'seoul'") }
        let nearest = try await W.step(
            "nearestRegion", { try await anonymous.nearestRegion(query: .init(lat: 37.5663, lon: 126.9779)) }, expect: { try $0.ok.body.json }
        )
        try W.check(nearest.id == seoul.id && seoul.names.en == "Seoul", "nearestRegion", "\(nearest) vs \(seoul)")
        done("region search and nearest (\(seoul.name), \(seoul.id))")

        // 3. A photo through the generated multipartForm upload, then a post with it (the fake provider reports
        //    rain, so the feed below shows the post).
        guard let photo = Data(base64Encoded: Self.photoJPEG) else { throw WalkFailure(step: "photo fixture", detail: "not base64") }
        let media = try await W.step(
            "uploadMedia",
            {
                try await author.uploadMedia(
                    body: .multipartForm([
                        .file(.init(payload: .init(body: HTTPBody(photo)), filename: "IMG_0001.JPG")),
                        .alt(.init(payload: .init(body: HTTPBody("비 오는 창가")))),
                    ])
                )
            },
            expect: { try $0.created.body.json }
        )
        try W.check(media.width == 16 && media.height == 12 && media.contentType == .imageJpeg && media.alt == "비 오는 창가", "uploadMedia", "\(media)")
        done("uploadMedia through multipartForm (201, \(media.byteSize) bytes)")
        let draft = Components.Schemas.CreatePostRequest(
            weatherType: .rain, category: .food, title: "비 오는 날엔", body: "파전에 막걸리 🌧️", regionId: seoul.id, mediaIds: [media.id]
        )
        let post = try await W.step(
            "createPost",
            { try await author.createPost(headers: .init(idempotencyKey: UUID().uuidString), body: .json(draft)) },
            expect: { try $0.created.body.json }
        )
        try W.check(post.isMine && !post.edited && post.title == "비 오는 날엔" && post.region.id == seoul.id, "createPost", "\(post)")
        try W.check(post.media.map(\.id) == [media.id], "createPost", "media \(post.media)")
        // The fake reports rain at a feels-like of 8.5 °C: the post records it (CONTRACT §9).
        try W.check(
            post.conditions?.value1.weatherType == .rain && post.conditions?.value1.feelsLike == 8.5 && post.conditions?.value1.band == .veryCold,
            "createPost", "conditions \(String(describing: post.conditions))"
        )
        done("createPost (201)")

        // 4. The list with include=weather: region.currentWeather is a typed Weather.
        let page = try await W.step(
            "listPosts include=weather",
            { try await anonymous.listPosts(query: .init(regionId: seoul.id, include: .weather, units: .metric, limit: 10)) },
            expect: { try $0.ok.body.json }
        )
        guard let listed = page.items.first(where: { $0.id == post.id }) else {
            throw W(step: "listPosts include=weather", detail: "post \(post.id) is not listed")
        }
        guard let weather = listed.region.currentWeather?.value1 else {
            throw W(step: "listPosts include=weather", detail: "region.currentWeather did not reach the generated type: \(listed.region)")
        }
        try W.check(
            weather.regionId == seoul.id && weather.units == .metric && weather.provider == .openMeteo && weather.weatherType == .rain
                && weather.temperature.isFinite && (0...100).contains(weather.humidity),
            "listPosts include=weather", "\(weather)"
        )
        done("listPosts include=weather: \(weather.weatherType.rawValue), \(weather.temperature) °C, humidity \(weather.humidity) %")

        // 5. An edit, guarded by the ETag.
        let fetched = try await W.step("getPost", { try await author.getPost(path: .init(id: post.id)) }, expect: { try $0.ok })
        guard let etag = fetched.headers.eTag else { throw W(step: "getPost", detail: "no ETag") }
        let edited = try await W.step(
            "updatePost If-Match",
            {
                try await author.updatePost(
                    path: .init(id: post.id), headers: .init(ifMatch: etag), body: .json(.init(body: "파전에 막걸리, 그리고 우산 ☔️"))
                )
            },
            expect: { try $0.ok }
        )
        let editedPost = try edited.body.json
        try W.check(editedPost.edited && editedPost.body == "파전에 막걸리, 그리고 우산 ☔️" && edited.headers.eTag != etag, "updatePost If-Match", "\(editedPost)")
        let stale = try await W.step(
            "updatePost stale If-Match",
            { try await author.updatePost(path: .init(id: post.id), headers: .init(ifMatch: etag), body: .json(.init(category: .place))) },
            expect: { try $0.preconditionFailed.body.json }
        )
        try W.check(stale.error.code == "precondition_failed", "updatePost stale If-Match", "\(stale)")
        done("updatePost with If-Match (200), stale If-Match (412 precondition_failed)")

        // 5b. Search (CONTRACT §10): the edited words, inside words and folded; a q empty once folded is 422.
        let searched = try await W.step(
            "listPosts q", { try await anonymous.listPosts(query: .init(q: "우산 파전", regionId: seoul.id, limit: 10)) }, expect: { try $0.ok.body.json }
        )
        try W.check(searched.items.contains { $0.id == post.id }, "listPosts q", "post \(post.id) not found by 우산 파전: \(searched.items.map(\.id))")
        let emptyQuery = try await W.step(
            "listPosts q empty once folded", { try await anonymous.listPosts(query: .init(q: "\u{200B}")) }, expect: { try $0.unprocessableContent.body.json }
        )
        try W.check(emptyQuery.error.code == "invalid_field", "listPosts q empty once folded", "\(emptyQuery)")
        done("listPosts q=우산 파전 (200, found), q=U+200B (422 invalid_field)")

        // 6. Another account reports the post; a repeat answers 200 with the same report.
        let reporterToken = try await W.step("createAccount (reporter)", { try await anonymous.createAccount() }, expect: { try $0.created.body.json }).token
        let reporter = client(token: reporterToken)
        let report = try await W.step(
            "reportPost", { try await reporter.reportPost(path: .init(id: post.id), body: .json(.init(reason: .spam, note: "광고 같아요"))) },
            expect: { try $0.created.body.json }
        )
        let again = try await W.step(
            "reportPost (repeat)", { try await reporter.reportPost(path: .init(id: post.id), body: .json(.init(reason: .spam))) },
            expect: { try $0.ok.body.json }
        )
        try W.check(again.id == report.id && report.outcome == .open && report.postId == post.id, "reportPost (repeat)", "\(again)")
        let reports = try await W.step("listMyReports", { try await reporter.listMyReports() }, expect: { try $0.ok.body.json })
        try W.check(reports.items.map(\.id) == [report.id], "listMyReports", "\(reports)")
        done("reportPost (201, repeat 200), listMyReports")

        // 6b. The reporter marks the post helpful (a repeat is the same), reads it back in a `top` list, and unmarks it.
        let marked = try await W.step(
            "markPostHelpful", { try await reporter.markPostHelpful(path: .init(id: post.id)) }, expect: { try $0.ok.body.json }
        )
        try W.check(marked.helpfulCount == 1 && marked.helpedByMe, "markPostHelpful", "\(marked)")
        let markedAgain = try await W.step(
            "markPostHelpful (repeat)", { try await reporter.markPostHelpful(path: .init(id: post.id)) }, expect: { try $0.ok.body.json }
        )
        try W.check(markedAgain.helpfulCount == 1, "markPostHelpful (repeat)", "\(markedAgain)")
        let ownMark = try await W.step(
            "markPostHelpful (own post)", { try await author.markPostHelpful(path: .init(id: post.id)) }, expect: { try $0.forbidden.body.json }
        )
        try W.check(ownMark.error.code == "forbidden", "markPostHelpful (own post)", "\(ownMark)")
        let top = try await W.step(
            "listPosts sort=top", { try await reporter.listPosts(query: .init(regionId: seoul.id, sort: .top, limit: 10)) }, expect: { try $0.ok.body.json }
        )
        guard let ranked = top.items.first(where: { $0.id == post.id }), ranked.helpedByMe, ranked.helpfulCount == 1 else {
            throw W(step: "listPosts sort=top", detail: "post \(post.id) not listed with the caller's mark: \(top.items.map { $0.id })")
        }
        let unmarked = try await W.step(
            "unmarkPostHelpful", { try await reporter.unmarkPostHelpful(path: .init(id: post.id)) }, expect: { try $0.ok.body.json }
        )
        try W.check(unmarked.helpfulCount == 0 && !unmarked.helpedByMe, "unmarkPostHelpful", "\(unmarked)")
        done("markPostHelpful (200, repeat 200, own post 403), listPosts sort=top, unmarkPostHelpful (200)")

        // 6c. Replies (CONTRACT §13): the second account answers the post (with an Idempotency-Key, so a retry is the same
        //     reply); the thread lists it, the post counts it, the post's author finds it in the inbox with its post,
        //     marks the inbox read, and reports the reply (a repeat answers 200 with the same report).
        let replyKey = UUID().uuidString
        let replyText = "저도 비 오면 파전이에요 🥞"
        let replied = try await W.step(
            "createReply",
            { try await reporter.createReply(path: .init(id: post.id), headers: .init(idempotencyKey: replyKey), body: .json(.init(body: replyText))) },
            expect: { try $0.created }
        )
        let reply = try replied.body.json
        try W.check(
            reply.postId == post.id && reply.body == replyText && reply.isMine && !reply.isPostAuthor && !reply.edited && reply.status == .visible
                && reply.post == nil && replied.headers.eTag != nil,
            "createReply", "\(reply) ETag \(String(describing: replied.headers.eTag))"
        )
        let replayedReply = try await W.step(
            "createReply (replay)",
            { try await reporter.createReply(path: .init(id: post.id), headers: .init(idempotencyKey: replyKey), body: .json(.init(body: replyText))) },
            expect: { try $0.created.body.json }
        )
        try W.check(replayedReply.id == reply.id, "createReply (replay)", "\(replayedReply.id) vs \(reply.id)")
        done("createReply with Idempotency-Key (201, replay 201 with the same reply)")
        let thread = try await W.step(
            "listReplies", { try await anonymous.listReplies(path: .init(id: post.id), query: .init(limit: 20)) }, expect: { try $0.ok.body.json }
        )
        guard let threaded = thread.items.first(where: { $0.id == reply.id }) else {
            throw W(step: "listReplies", detail: "reply \(reply.id) is not listed: \(thread.items.map(\.id))")
        }
        try W.check(
            thread.items.count == 1 && thread.nextCursor == nil && !threaded.isPostAuthor && !threaded.isMine && threaded.status == nil
                && threaded.author.id == reply.author.id,
            "listReplies", "\(thread)"
        )
        let counted = try await W.step("getPost (replyCount)", { try await anonymous.getPost(path: .init(id: post.id)) }, expect: { try $0.ok.body.json })
        try W.check(counted.replyCount == 1, "getPost (replyCount)", "replyCount \(counted.replyCount)")
        done("listReplies (200, isPostAuthor false), getPost replyCount 1")
        let inbox = try await W.step("getInbox", { try await author.getInbox() }, expect: { try $0.ok.body.json })
        guard let received = inbox.items.first(where: { $0.id == reply.id }) else {
            throw W(step: "getInbox", detail: "reply \(reply.id) is not in the inbox: \(inbox.items.map(\.id))")
        }
        try W.check(
            received.post?.id == post.id && received.post?.title == post.title && received.body == replyText && inbox.unread >= 1 && !inbox.unreadCapped,
            "getInbox", "\(inbox)"
        )
        let read = try await W.step(
            "markInboxRead", { try await author.markInboxRead(body: .json(.init(upTo: reply.id))) }, expect: { try $0.ok.body.json }
        )
        try W.check(read.unread == 0 && !read.unreadCapped, "markInboxRead", "\(read)")
        done("getInbox (reply with post \(post.id), unread \(inbox.unread)), markInboxRead (unread 0)")
        let replyReport = try await W.step(
            "reportReply", { try await author.reportReply(path: .init(id: reply.id), body: .json(.init(reason: .abuse, note: "말투가 거칠어요"))) },
            expect: { try $0.created.body.json }
        )
        try W.check(
            replyReport.target == .reply && replyReport.replyId == reply.id && replyReport.postId == post.id && replyReport.outcome == .open,
            "reportReply", "\(replyReport)"
        )
        let replyReportAgain = try await W.step(
            "reportReply (repeat)", { try await author.reportReply(path: .init(id: reply.id), body: .json(.init(reason: .abuse))) },
            expect: { try $0.ok.body.json }
        )
        try W.check(replyReportAgain.id == replyReport.id, "reportReply (repeat)", "\(replyReportAgain)")
        let authorReports = try await W.step("listMyReports (reply)", { try await author.listMyReports() }, expect: { try $0.ok.body.json })
        try W.check(
            authorReports.items.map(\.id) == [replyReport.id] && authorReports.items.first?.target == .reply, "listMyReports (reply)", "\(authorReports)"
        )
        done("reportReply (201, repeat 200), listMyReports target reply")

        // 7. Register the anonymous account (same id), then log in on a second device.
        let username = "walk_\(UUID().uuidString.prefix(8).lowercased())"
        let password = "an umbrella for rainy days"
        let registered = try await W.step(
            "register", { try await author.register(body: .json(.init(username: username, password: password))) }, expect: { try $0.ok.body.json }
        )
        try W.check(
            registered.account.id == created.account.id && registered.account.kind == .registered && registered.account.username == username,
            "register", "\(registered.account)"
        )
        let oldToken = try await W.step("getMe (old token)", { try await author.getMe() }, expect: { try $0.unauthorized.body.json })
        try W.check(oldToken.error.code == "unauthenticated", "getMe (old token)", "\(oldToken)")
        let wrong = try await W.step(
            "login (wrong password)", { try await anonymous.login(body: .json(.init(username: username, password: "not the password at all"))) },
            expect: { try $0.unauthorized.body.json }
        )
        try W.check(wrong.error.code == "invalid_credentials", "login (wrong password)", "\(wrong)")
        let session = try await W.step(
            "login", { try await anonymous.login(body: .json(.init(username: username, password: password))) }, expect: { try $0.created.body.json }
        )
        let device = client(token: session.token)
        let mine = try await W.step("listMyPosts", { try await device.listMyPosts() }, expect: { try $0.ok.body.json })
        try W.check(mine.items.map(\.id) == [post.id] && mine.items.first?.status == .visible, "listMyPosts", "\(mine)")
        done("register (200, old token 401), login (wrong password 401, 201), listMyPosts")

        // 8. The feed: the region, its weather and the posts tagged with it.
        let feed = try await W.step(
            "getFeed",
            { try await device.getFeed(query: .init(regionId: seoul.id, regionOnly: true, units: .metric, include: .weather, limit: 20)) },
            expect: { try $0.ok.body.json }
        )
        try W.check(
            feed.region.id == seoul.id && feed.currentWeather.weatherType == .rain && feed.items.map(\.id) == [post.id]
                && feed.items.first?.region.currentWeather?.value1.regionId == seoul.id,
            "getFeed", "\(feed)"
        )
        let imperial = try await W.step(
            "getRegionWeather", { try await anonymous.getRegionWeather(path: .init(id: seoul.id), query: .init(units: .imperial)) },
            expect: { try $0.ok.body.json }
        )
        try W.check(imperial.units == .imperial && imperial.temperature > feed.currentWeather.temperature, "getRegionWeather", "\(imperial)")
        done("getFeed regionOnly=true include=weather, getRegionWeather imperial")

        // 8b. The outfit guide: the bands, then Seoul's (in °F; the band stays °C) and the nearest region's.
        let bands = try await W.step(
            "listOutfitBands", { try await anonymous.listOutfitBands(headers: .init(acceptLanguage: "en")) }, expect: { try $0.ok.body.json }
        )
        try W.check(
            bands.items.map(\.id) == [.hot, .warm, .mild, .cool, .chilly, .cold, .veryCold, .freezing] && bands.nextCursor == nil
                && bands.items.first?.minFeelsLike == 28 && bands.items.first?.maxFeelsLike == nil,
            "listOutfitBands", "\(bands)"
        )
        let guide = try await W.step(
            "getRegionOutfit",
            { try await device.getRegionOutfit(path: .init(id: seoul.id), query: .init(units: .imperial, limit: 20), headers: .init(acceptLanguage: "en")) },
            expect: { try $0.ok.body.json }
        )
        try W.check(
            guide.region.id == seoul.id && guide.currentWeather.units == .imperial && guide.band.id == .veryCold && guide.band.minFeelsLike == 5
                && guide.carry.map(\.id) == [.umbrella] && guide.band.items.contains("coat"),
            "getRegionOutfit", "\(guide)"
        )
        let near = try await W.step(
            "getOutfit", { try await anonymous.getOutfit(query: .init(lat: 37.5663, lon: 126.9779)) }, expect: { try $0.ok.body.json }
        )
        try W.check(near.region.id == seoul.id && near.band.id == .veryCold, "getOutfit", "\(near.region) \(near.band)")
        done("listOutfitBands, getRegionOutfit imperial (band veryCold, carry umbrella), getOutfit by position")

        // 9. The live board (CONTRACT §11): the signed-in device follows GET /v1/stream while the reporter posts and then
        //    deletes; the moderation stream wants a moderator.
        let streamed = try await liveBoard(subscriberToken: session.token, poster: reporter, regionID: seoul.id)
        done("streamBoard: event post for post \(streamed) within 20 s of subscribing, event reply and replyRemoved for a reply on it, then event remove on its deletion")
        let streams = EventStreamTransport()
        defer { streams.close() }
        let noToken = try await W.step(
            "streamModeration (no token)", { try await Client(serverURL: serverURL, transport: streams).streamModeration() },
            expect: { try $0.unauthorized.body.json }
        )
        try W.check(noToken.error.code == "unauthenticated", "streamModeration (no token)", "\(noToken)")
        let member = try await W.step(
            "streamModeration (member)",
            { try await Client(serverURL: serverURL, transport: streams, middlewares: [BearerMiddleware(token: session.token)]).streamModeration() },
            expect: { try $0.forbidden.body.json }
        )
        try W.check(member.error.code == "forbidden", "streamModeration (member)", "\(member)")
        done("streamModeration without a token (401 unauthenticated), as a member (403 forbidden)")

        // 10. Delete the post; it is gone for everyone. Log out.
        _ = try await W.step("deletePost", { try await device.deletePost(path: .init(id: post.id)) }, expect: { try $0.noContent })
        let gone = try await W.step("getPost (deleted)", { try await anonymous.getPost(path: .init(id: post.id)) }, expect: { try $0.notFound.body.json })
        try W.check(gone.error.code == "not_found", "getPost (deleted)", "\(gone)")
        _ = try await W.step("logout", { try await device.logout() }, expect: { try $0.noContent })
        _ = try await W.step("getMe (logged out)", { try await device.getMe() }, expect: { try $0.unauthorized })
        done("deletePost (204, then 404), logout (204, then 401)")
        return steps
    }
}

extension ClientWalk {
    /// Step 9: subscribes to `GET /v1/stream` (no filters) as `subscriberToken` through the generated client, waits
    /// for the stream's first message (`retry: 2000` and the id-only `id:` that fixes where it starts, so nothing
    /// committed after it can be missed), then has `poster` create a post and reads until that post's `event: post`
    /// arrives, has `poster` reply to it and reads until the reply's `event: reply` (CONTRACT §13), deletes the reply and
    /// reads until its `event: replyRemoved`, then has `poster` delete the post and reads until its `event: remove`.
    /// Heartbeats and id-only messages (events without data) and other posts' and replies' events are skipped; every
    /// payload must decode as the type its event names. All of it within 20 s, else the walk fails naming what it was waiting for. The stream is cancelled
    /// afterwards, whatever happened. Returns the post's id.
    func liveBoard(subscriberToken: String, poster: Client, regionID: String) async throws -> String {
        typealias W = WalkFailure
        let name = "streamBoard"
        let streams = EventStreamTransport()
        defer { streams.close() }
        let subscriber = Client(serverURL: serverURL, transport: streams, middlewares: [BearerMiddleware(token: subscriberToken)])
        let waiting = WaitingFor("the response to GET /v1/stream")
        return try await W.within(seconds: 20, name, waiting) {
            let opened = try await W.step(name, { try await subscriber.streamBoard() }, expect: { try $0.ok })
            var events = try opened.body.textEventStream.asDecodedServerSentEvents().makeAsyncIterator()
            waiting.set("the stream's first message")
            guard let first = try await events.next() else { throw W(step: name, detail: "the stream ended before its first message") }
            try W.check(
                first.retry == 2000 && first.id != nil && first.event == nil && first.data == nil, name,
                "the first message must be `retry: 2000` with an `id:` and no event or data: \(first)"
            )
            let draft = Components.Schemas.CreatePostRequest(weatherType: .rain, category: .outfit, body: "우산 챙기세요 ☂️", regionId: regionID)
            let post = try await W.step(
                "createPost (streamed)", { try await poster.createPost(headers: .init(idempotencyKey: UUID().uuidString), body: .json(draft)) },
                expect: { try $0.created.body.json }
            )
            waiting.set("event: post for post \(post.id) (created after the stream's first message)")
            try await Self.read(&events, name, waiting) { event, payload in
                if event.event == "post", case .post(let streamed) = payload, streamed.id == post.id {
                    try W.check(streamed.body == post.body && streamed.region.id == regionID, name, "event: post \(streamed) for \(post)")
                    return true
                }
                return false
            }
            let reply = try await W.step(
                "createReply (streamed)", { try await poster.createReply(path: .init(id: post.id), body: .json(.init(body: "작은 우산도 괜찮아요"))) },
                expect: { try $0.created.body.json }
            )
            waiting.set("event: reply for reply \(reply.id) on post \(post.id)")
            try await Self.read(&events, name, waiting) { event, payload in
                if case .reply(let streamed) = payload, streamed.id == reply.id {
                    try W.check(
                        streamed.postId == post.id && streamed.body == reply.body && streamed.isPostAuthor && !streamed.isMine, name,
                        "event: reply \(streamed) for \(reply)"
                    )
                    return true
                }
                return false
            }
            _ = try await W.step("deleteReply (streamed)", { try await poster.deleteReply(path: .init(id: reply.id)) }, expect: { try $0.noContent })
            waiting.set("event: replyRemoved for reply \(reply.id) (deleted by its author)")
            try await Self.read(&events, name, waiting) { event, payload in
                if case .replyRemoved(let removed) = payload, removed.id == reply.id {
                    try W.check(removed.postId == post.id, name, "event: replyRemoved \(removed) for reply \(reply.id) on post \(post.id)")
                    return true
                }
                return false
            }
            _ = try await W.step("deletePost (streamed)", { try await poster.deletePost(path: .init(id: post.id)) }, expect: { try $0.noContent })
            waiting.set("event: remove for post \(post.id) (deleted by its author)")
            try await Self.read(&events, name, waiting) { event, payload in
                if case .removed(let removed) = payload, removed.id == post.id { return true }
                return false
            }
            return post.id
        }
    }

    /// A board event's `data`, decoded as the type its `event:` names (CONTRACT §11, §13).
    enum BoardPayload {
        case post(Components.Schemas.Post)
        case removed(Components.Schemas.StreamRemoved)
        case reply(Components.Schemas.Reply)
        case replyRemoved(Components.Schemas.StreamReplyRemoved)
    }

    /// Reads `events` until `found` says yes. Skips events without data (heartbeats, id-only messages); decodes every
    /// other event's data as its type and fails the walk on an event the board stream does not send, an undecodable
    /// payload, an event without an id, or the end of the stream.
    static func read<Events: AsyncIteratorProtocol>(
        _ events: inout Events, _ name: String, _ waiting: WaitingFor,
        until found: (ServerSentEvent, BoardPayload) throws -> Bool
    ) async throws where Events.Element == ServerSentEvent {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        while let event = try await events.next() {
            guard let data = event.data else { continue }
            try WalkFailure.check(event.id != nil, name, "an event without an id: \(event)")
            let payload: BoardPayload
            do {
                switch event.event {
                case "post", "update": payload = .post(try decoder.decode(Components.Schemas.Post.self, from: Data(data.utf8)))
                case "remove": payload = .removed(try decoder.decode(Components.Schemas.StreamRemoved.self, from: Data(data.utf8)))
                case "reply": payload = .reply(try decoder.decode(Components.Schemas.Reply.self, from: Data(data.utf8)))
                case "replyRemoved": payload = .replyRemoved(try decoder.decode(Components.Schemas.StreamReplyRemoved.self, from: Data(data.utf8)))
                default: throw WalkFailure(step: name, detail: "unexpected event \(event.event ?? "(none)") while waiting for \(waiting.value): \(event)")
                }
            } catch let failure as WalkFailure {
                throw failure
            } catch {
                throw WalkFailure(step: name, detail: "event \(event.event ?? "") data does not decode: \(error); \(data.prefix(300))")
            }
            if try found(event, payload) { return }
        }
        throw WalkFailure(step: name, detail: "the stream ended while waiting for \(waiting.value)")
    }
}

extension ClientWalk {
    /// A 16×12 JPEG made with `vips copy a.ppm a.jpg[Q=80,strip]`: what a phone's camera roll would send, only small.
    static let photoJPEG = "/9j/2wBDAAYEBQYFBAYGBQYHBwYIChAKCgkJChQODwwQFxQYGBcUFhYaHSUfGhsjHBYWICwgIyYnKSopGR8tMC0oMCUoKSj/2wBDAQcHBwoIChMKChMoGhYaKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCj/wAARCAAMABADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDzXSfCn3f3f6V2ek+FPu/u/wBK7fSdOtuPkrs9J0624+Sljs7qanPwrxFV90//2Q=="
}
