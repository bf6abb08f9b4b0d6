import Vocabulary

/// The region fields a post carries.
public struct RegionSummary: Sendable, Equatable {
    public var id: Int
    public var nameEnglish: String
    public var nameKorean: String?
    public var countryCode: String

    public init(id: Int, nameEnglish: String, nameKorean: String?, countryCode: String) {
        self.id = id
        self.nameEnglish = nameEnglish
        self.nameKorean = nameKorean
        self.countryCode = countryCode
    }

    public func name(in language: Language) -> String {
        language.placeName(korean: nameKorean, english: nameEnglish)
    }
}
