import Board
import Hummingbird
import Vocabulary
import WeatherboardAPI

/// CONTRACT §3: accounts, credentials, sessions and blocks.
struct AccountsController {
    let mediaURLs: MediaURLs
    let accounts: AccountService
    let posts: PostService

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("accounts", use: create)
        routes.get("accounts/me", use: me)
        routes.delete("accounts/me", use: deleteMe)
        routes.post("accounts/me/credentials", use: register)
        routes.get("accounts/me/posts", use: myPosts)
        routes.post("accounts/me/blocks", use: block)
        routes.delete("accounts/me/blocks/:accountId", use: unblock)
        routes.post("sessions", use: login)
        routes.delete("sessions/current", use: logout)
        return routes
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await context.refuseRevokedToken()
        let issued = try await accounts.createAnonymous(clientIP: context.clientIP, idempotencyKey: request.idempotencyKey)
        return try jsonResponse(AuthResponse(account: .init(issued.account), token: issued.token), status: issued.replayed ? .ok : .created)
    }

    @Sendable func me(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try await context.requireIdentity()
        return try jsonResponse(AccountResponse(identity.account))
    }

    @Sendable func deleteMe(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await accounts.deleteAccount(by: try context.requireCaller())
        return noContent()
    }

    @Sendable func register(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try await context.requireIdentity()
        let body = try await request.decodeJSON(as: CredentialsRequest.self, context: context)
        let issued = try await accounts.register(identity, username: body.username, password: body.password)
        return try jsonResponse(AuthResponse(account: .init(issued.account), token: issued.token))
    }

    @Sendable func login(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await context.refuseRevokedToken()
        let body = try await request.decodeJSON(as: CredentialsRequest.self, context: context)
        let issued = try await accounts.login(username: body.username, password: body.password, clientIP: context.clientIP)
        return try jsonResponse(AuthResponse(account: .init(issued.account), token: issued.token), status: .created)
    }

    @Sendable func logout(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await accounts.logout(by: try context.requireCaller())
        return noContent()
    }

    @Sendable func myPosts(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try await context.requireIdentity()
        let query = QueryInput(request)
        let page = try await posts.listOwn(identity, before: try query.cursor(), limit: try query.pageLimit())
        let viewer = context.viewer
        let language = request.language
        let links = mediaURLs.links(request, context)
        return jsonResponse(Page(items: page.posts.map { PostResponse($0, viewer: viewer, language: language, media: links) }, nextCursor: page.nextCursor))
    }

    @Sendable func block(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await request.decodeJSON(as: BlockRequest.self, context: context)
        guard let id = CanonicalID.parse(body.accountId) else { throw APIError.notFound("account") }
        try await accounts.block(by: caller, accountID: id)
        return noContent()
    }

    @Sendable func unblock(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try await accounts.unblock(by: caller, accountID: try context.pathID("accountId", "account"))
        return noContent()
    }
}
