/// `parley detect`: not yet available in this build.
let detectCommand = Command(
    name: "detect",
    summary: "Find who talked when in recorded audio",
    help: "Usage: parley detect ...\n\nFind who talked when in recorded audio. Not yet available in this build.",
    run: { _ in
        printError("parley detect: not yet available in this build")
        return ExitStatus.usage
    }
)
