/// What a post is about (CONTRACT §2).
public enum Category: String, Codable, Sendable, CaseIterable {
    case food, place, music, outfit, activity

    /// The localized name (CONTRACT §2 for Korean).
    public func name(in language: Language) -> String {
        switch (self, language) {
        case (.food, .ko): "음식"
        case (.place, .ko): "장소"
        case (.music, .ko): "음악"
        case (.outfit, .ko): "옷차림"
        case (.activity, .ko): "활동"
        case (.food, .en): "Food"
        case (.place, .en): "Places"
        case (.music, .en): "Music"
        case (.outfit, .en): "Outfits"
        case (.activity, .en): "Activities"
        }
    }
}
