/// `parley record`: not yet available in this build.
let recordCommand = Command(
    name: "record",
    summary: "Record from a microphone or camera",
    help: "Usage: parley record ...\n\nRecord from a microphone or camera. Not yet available in this build.",
    run: { _ in
        printError("parley record: not yet available in this build")
        return ExitStatus.usage
    }
)
