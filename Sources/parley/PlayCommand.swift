/// `parley play`: not yet available in this build.
let playCommand = Command(
    name: "play",
    summary: "Play a WAV file through ALSA",
    help: "Usage: parley play ...\n\nPlay a WAV file through ALSA. Not yet available in this build.",
    run: { _ in
        printError("parley play: not yet available in this build")
        return ExitStatus.usage
    }
)
