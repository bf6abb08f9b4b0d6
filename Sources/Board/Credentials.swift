/// Username and password rules of CONTRACT §3.
public enum Credentials {
    /// Lower-cases, then requires 3–30 of `[a-z0-9_]`.
    public static func normalizeUsername(_ raw: String) throws -> String {
        let username = raw.lowercased()
        guard (3...30).contains(username.unicodeScalars.count),
            username.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" })
        else {
            throw BoardError.invalidField(field: "username", message: "must be 3–30 characters of a–z, 0–9 and _")
        }
        return username
    }

    /// At least 10 and at most 200 characters (Unicode code points), not all the same character, not the username.
    public static func validatePassword(_ password: String, username: String) throws {
        let count = password.unicodeScalars.count
        guard count >= 10 else {
            throw BoardError.invalidField(field: "password", message: "must be at least 10 characters")
        }
        guard count <= 200 else {
            throw BoardError.invalidField(field: "password", message: "must be at most 200 characters")
        }
        if Set(password.unicodeScalars).count < 3 || password.lowercased().contains(username) {
            throw BoardError.invalidField(field: "password", message: "is too easy to guess")
        }
    }
}
