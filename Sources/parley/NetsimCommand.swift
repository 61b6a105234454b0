/// `parley netsim`: not yet available in this build.
let netsimCommand = Command(
    name: "netsim",
    summary: "Replay or generate network traces through the jitter buffer",
    help: "Usage: parley netsim ...\n\nReplay or generate network traces through the jitter buffer. Not yet available in this build.",
    run: { _ in
        printError("parley netsim: not yet available in this build")
        return ExitStatus.usage
    }
)
