@testable import Board
import Database
import Foundation
import Testing

/// The push queue's statements at scale, planned as the server plans them (a generic plan): 1,000,000 notifications
/// (950,000 answered, 40,000 waiting for later, 10,000 due; one in ten a reply's, over 10,000 replies), 100,000 devices, the 20,000 of 200 accounts with the
/// briefing on scheduled through the day, 2,000 of them due. A
/// worker's claim and the scheduler's due devices must each read about a batch, whatever else the tables hold.
///
/// The rows are written inside one transaction that is rolled back, on a database of the suite's own.
@Suite("Push queue plans at 1M notifications")
struct PushPlanTests {
    static let batch = 500

    @Test("a claim of 500 and 5,000 due briefings each read about their batch: index walks, no sequential scan, no sort, no JIT")
    func plansAtScale() async throws {
        let failures: [String] = try await TestDatabase.isolated(named: "pushplan") { url in
            try await TestDatabase.inRolledBackTransaction(on: url, timeout: "900s", defaultJIT: true) { connection in
                try Self.seed(connection)
                let now = Date()
                var failures: [String] = []
                let claim = PushQueue.claimQuery(now: now, leaseEnd: now.addingTimeInterval(60), limit: Self.batch)
                let claimPlan = try ListPlanTests.genericPlan(claim, connection: connection)
                failures += Self.problems(in: claimPlan, name: "the claim", bound: 12 * Self.batch)
                if !claimPlan.contains("push_queue_due_idx") { failures.append("the claim does not walk push_queue_due_idx\n\(claimPlan)") }
                let claimed = try connection.query(SQLQuery(unsafeSQL: "SELECT count(*) AS n FROM push_queue WHERE leased_until IS NOT NULL"))[0].decode(Int.self, "n")
                if claimed != Self.batch { failures.append("the claim leased \(claimed), not \(Self.batch)") }

                let due = PushQueue.dueQuery(now: now, limit: 5000)
                let duePlan = try ListPlanTests.genericPlan(due, connection: connection)
                failures += Self.problems(in: duePlan, name: "the due briefings", bound: 3 * 2000)
                if !duePlan.contains("devices_briefing_due_idx") { failures.append("due briefings do not walk devices_briefing_due_idx\n\(duePlan)") }
                return failures
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }

    static func problems(in plan: String, name: String, bound: Int) -> [String] {
        var problems: [String] = []
        if plan.contains("Seq Scan") { problems.append("a sequential scan") }
        if plan.contains("JIT:") { problems.append("JIT") }
        if plan.contains("Sort") && !plan.contains("Incremental Sort") { problems.append("a sort") }
        let read = QueuePlanTests.rowsRead(plan)
        if read > bound { problems.append("\(read) rows read (at most \(bound))") }
        return problems.isEmpty ? [] : ["\(name): \(problems.joined(separator: ", "))\n\(plan)"]
    }

    /// 1,000 accounts with a session and 100 devices each (200 accounts with the briefing on, their devices scheduled
    /// through the day, 2,000 of them due; the rest unscheduled), and 1,000,000 notifications over the devices: 950,000
    /// answered, 40,000 due in an hour, 10,000 due now.
    static func seed(_ connection: PostgresConnection) throws {
        try connection.simpleQuery(
            """
            CREATE TEMP TABLE seed_accounts ON COMMIT DROP AS
            WITH a AS (INSERT INTO accounts (display_name) SELECT 'push plan ' || i FROM generate_series(1, 1000) i RETURNING id)
            SELECT id, row_number() OVER (ORDER BY id) AS n FROM a;
            INSERT INTO sessions (account_id, token_hash, token_prefix) SELECT id, md5('pp' || id) || md5('pq' || id), 'plan' FROM seed_accounts;
            INSERT INTO notification_settings (account_id, briefing_enabled, briefing_region_id, briefing_minute)
            SELECT id, n <= 200, CASE WHEN n <= 200 THEN 1835848 END, CASE WHEN n <= 200 THEN 420 END FROM seed_accounts;
            INSERT INTO devices (token, account_id, session_id, environment, time_zone, language, units, next_briefing_at)
            SELECT md5(s.id || '-' || k) || md5(k || '-' || s.id), s.account_id, s.id, 'production', 'Asia/Seoul', 'ko', 'metric',
                   CASE WHEN a.n <= 20 THEN now() - interval '1 minute' WHEN a.n <= 200 THEN now() + ((a.n * 100 + k) % 1440 + 1) * interval '1 minute' END
            FROM sessions s JOIN seed_accounts a ON a.id = s.account_id CROSS JOIN generate_series(1, 100) k;
            CREATE TEMP TABLE seed_devices ON COMMIT DROP AS SELECT token, account_id, row_number() OVER (ORDER BY token) - 1 AS n FROM devices
            WHERE account_id IN (SELECT id FROM seed_accounts);
            CREATE TEMP TABLE seed_post ON COMMIT DROP AS
            WITH p AS (
                INSERT INTO posts (author_id, region_id, weather_type, category, title, body)
                SELECT id, 1835848, 'rain', 'food', 'push plan', 'push plan' FROM seed_accounts ORDER BY id LIMIT 1 RETURNING id, author_id
            ) SELECT * FROM p;
            INSERT INTO replies (post_id, post_author_id, author_id, body, status)
            SELECT p.id, p.author_id, a.id, 'reply ' || i, 'visible' FROM seed_post p CROSS JOIN generate_series(1, 10000) i
            JOIN seed_accounts a ON a.n = 2 + i % 999;
            INSERT INTO blocks (blocker_id, blocked_id) SELECT a.id, b.id FROM seed_accounts a JOIN seed_accounts b ON b.n = a.n % 1000 + 1;
            INSERT INTO push_queue (account_id, device_token, kind, apns_id, collapse_id, priority, payload, reply_id, send_after, expires_at, done_at, result)
            SELECT d.account_id, d.token, CASE WHEN i % 10 = 0 THEN 'reply' ELSE 'reportOutcome' END, gen_random_uuid(), 'report-' || i, 10,
                   CASE WHEN i % 10 = 0 THEN NULL ELSE '{"aps":{}}' END,
                   CASE WHEN i % 10 = 0 THEN (SELECT min(id) FROM replies) + (i / 10) % 10000 END,
                   CASE WHEN i % 100 < 95 THEN now() - interval '2 hours' WHEN i % 100 < 99 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
                   now() + interval '2 hours',
                   CASE WHEN i % 100 < 95 THEN now() - interval '1 hour' END, CASE WHEN i % 100 < 95 THEN 'delivered' END
            FROM generate_series(0, 999999) i JOIN seed_devices d ON d.n = i % 100000
            ON CONFLICT DO NOTHING;
            ANALYZE accounts; ANALYZE devices; ANALYZE notification_settings; ANALYZE push_queue; ANALYZE replies; ANALYZE posts; ANALYZE blocks;
            """
        )
    }
}
