import Board
import Hummingbird
import Vocabulary
import WeatherboardAPI

/// CONTRACT §14: the caller's devices and notification settings. Every write checks the token in its own transaction
/// (`Caller`).
struct NotificationsController {
    let notifications: NotificationService

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.put("accounts/me/devices/:deviceToken", use: register)
        routes.get("accounts/me/devices", use: devices)
        routes.delete("accounts/me/devices/:deviceToken", use: remove)
        routes.get("accounts/me/notifications", use: settings)
        routes.patch("accounts/me/notifications", use: update)
        return routes
    }

    @Sendable func register(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let token = context.parameters.get("deviceToken") ?? ""
        let body = try await request.decodeJSON(as: DeviceRequest.self, context: context)
        let (device, created) = try await notifications.register(
            token: token, environment: body.environment, timeZone: body.timeZone, language: body.language, units: body.units,
            defaultLanguage: request.language, by: caller
        )
        return try jsonResponse(Self.response(device), status: created ? .created : .ok)
    }

    @Sendable func devices(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try await context.requireIdentity()
        let query = QueryInput(request)
        let page = try await notifications.devices(of: identity, before: try query.cursor(), limit: try query.pageLimit())
        return try jsonResponse(Page(items: page.devices.map(Self.response), nextCursor: page.nextCursor))
    }

    @Sendable func remove(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try await notifications.remove(token: context.parameters.get("deviceToken") ?? "", by: caller)
        return noContent()
    }

    @Sendable func settings(_ request: Request, context: AppRequestContext) async throws -> Response {
        try jsonResponse(Self.response(try await notifications.settings(of: try await context.requireIdentity())))
    }

    @Sendable func update(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await request.decodeJSON(as: NotificationSettingsPatchRequest.self, context: context)
        let patch = NotificationSettingsPatch(
            replies: body.replies, reportOutcomes: body.reportOutcomes, moderation: body.moderation,
            briefing: body.briefing.map { .init(enabled: $0.enabled, regionID: $0.regionId, time: $0.time, days: $0.days) },
            quietHours: body.quietHours.map { $0.map { .init(start: $0.start, end: $0.end) } }
        )
        return try jsonResponse(Self.response(try await notifications.update(patch, by: caller)))
    }

    static func response(_ device: Device) -> DeviceResponse {
        DeviceResponse(
            token: device.token, environment: device.environment.rawValue, timeZone: device.timeZone, language: device.language.rawValue,
            units: device.units.rawValue, registeredAt: device.registeredAt
        )
    }

    static func response(_ settings: NotificationSettings) -> NotificationSettingsResponse {
        NotificationSettingsResponse(
            replies: settings.replies, reportOutcomes: settings.reportOutcomes, moderation: settings.moderation,
            briefing: .init(
                enabled: settings.briefing.enabled, regionId: settings.briefing.regionID.map(String.init), time: settings.briefing.time?.text,
                days: settings.briefing.days.map(\.rawValue)
            ),
            quietHours: settings.quietHours.map { .init(start: $0.start.text, end: $0.end.text) }
        )
    }
}
