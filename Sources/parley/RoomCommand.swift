/// `parley room`: not yet available in this build.
let roomCommand = Command(
    name: "room",
    summary: "Simulated call room that shows who is talking",
    help: "Usage: parley room ...\n\nSimulated call room that shows who is talking. Not yet available in this build.",
    run: { _ in
        printError("parley room: not yet available in this build")
        return ExitStatus.usage
    }
)
