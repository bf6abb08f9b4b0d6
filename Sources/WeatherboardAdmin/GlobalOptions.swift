import ArgumentParser

/// Options every command accepts.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The server's base URL, e.g. https://board.example.com (overrides the stored one).", valueName: "URL"))
    var server: String?
}
