import ArgumentParser

/// `--limit N --cursor C --json`, shared by the commands that list pages (`queue`, `log`).
struct ListingOptions: ParsableArguments {
    @Option(name: .long, help: "How many items to list (pages of 100 are fetched as needed).")
    var limit = 20

    @Option(name: .long, help: "Continue after this cursor (a previous page's nextCursor).")
    var cursor: String?

    @Flag(name: .long, help: "Print the page as JSON: {\"items\": [...], \"nextCursor\": ...}.")
    var json = false

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1") }
    }
}

/// Prints a collected listing: the API's own JSON with `--json`, otherwise a table and a hint for the next page.
enum Listing {
    static func show<Item>(
        _ result: (items: [Item], nextCursor: String?, raw: [[UInt8]]), options: ListingOptions, command: String, empty: String,
        table: ([Item]) -> TableRenderer
    ) throws {
        if options.json {
            try JSONPages.print(result.raw, nextCursor: result.nextCursor)
            return
        }
        if result.items.isEmpty {
            Console.out(empty)
            return
        }
        Console.out(table(result.items).render())
        if let next = result.nextCursor {
            Console.out("more: weatherboard-admin \(command) --cursor \(next)")
        }
    }
}
