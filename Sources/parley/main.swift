// The `parley` command-line tool: argument parsing and output formats only; the work is done
// by the library modules. Each subcommand lives in its own file as a `Command` value.

import Foundation

/// Every subcommand, in the order `parley --help` lists them.
let commands: [Command] = [
    detectCommand,
    reportCommand,
    roomCommand,
    echoCommand,
    netsimCommand,
    callCommand,
    joinCommand,
    sendCommand,
    receiveCommand,
    devicesCommand,
    recordCommand,
    playCommand,
    codecCommand,
]

exit(runCLI(CommandLine.arguments, commands: commands))
