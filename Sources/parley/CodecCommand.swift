/// `parley codec`: not yet available in this build.
let codecCommand = Command(
    name: "codec",
    summary: "Round-trip audio or video through Opus or VP8/VP9 and report the quality",
    help: "Usage: parley codec ...\n\nNot yet available in this build.",
    run: { _ in
        printError("parley codec: not yet available in this build")
        return ExitStatus.usage
    }
)
