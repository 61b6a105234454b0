import Foundation

/// A `parley` subcommand: its name, one line for the overview, its full help text and the
/// function that runs it with the arguments after the subcommand's name.
struct Command: Sendable {
    let name: String
    let summary: String
    let help: String
    /// Returns the process exit status: 0 success, 1 some input failed, 2 usage error.
    let run: @Sendable ([String]) -> Int32
}

/// Exit statuses shared by every subcommand.
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
}

/// Writes `text` to standard error, followed by a newline.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// A subcommand's failure with its message (``runReportingErrors(_:_:)`` prints it after the
/// command's name, exit status 1).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs the body of subcommand `name`: a usage error is printed with the pointer to its help
/// (exit status 2), any other error as it is (exit status 1).
func runReportingErrors(_ name: String, _ body: () throws -> Int32) -> Int32 {
    do {
        return try body()
    } catch let e as ArgumentScanner.UsageError {
        printError("parley \(name): \(e)\nRun 'parley \(name) --help' for usage.")
        return ExitStatus.usage
    } catch {
        printError("parley \(name): \(error)")
        return ExitStatus.failure
    }
}

/// Dispatches `argv` to the named subcommand; handles `--help`, `help CMD` and `--version`.
func runCLI(_ argv: [String], commands: [Command]) -> Int32 {
    let args = Array(argv.dropFirst())
    func overview() -> String {
        var s = "parley \(parleyVersion): real-time media pipeline and voice activity detection\n\n"
        s += "Usage: parley <command> [options]\n\nCommands:\n"
        for c in commands {
            s += "  " + c.name.padding(toLength: 10, withPad: " ", startingAt: 0) + c.summary + "\n"
        }
        s += "\nRun 'parley <command> --help' for a command's options."
        return s
    }
    guard let first = args.first else {
        printError(overview())
        return ExitStatus.usage
    }
    switch first {
    case "-h", "--help":
        print(overview())
        return ExitStatus.success
    case "--version":
        print("parley \(parleyVersion)")
        return ExitStatus.success
    case "help":
        if args.count > 1, let c = commands.first(where: { $0.name == args[1] }) {
            print(c.help)
        } else {
            print(overview())
        }
        return ExitStatus.success
    default:
        guard let c = commands.first(where: { $0.name == first }) else {
            printError("parley: unknown command '\(first)'\n\n" + overview())
            return ExitStatus.usage
        }
        let rest = Array(args.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            print(c.help)
            return ExitStatus.success
        }
        return c.run(rest)
    }
}

/// The version printed by `parley --version` and written into JSON outputs.
let parleyVersion = "0.1.0"
