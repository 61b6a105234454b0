/// `parley send`: not yet available in this build.
let sendCommand = Command(
    name: "send",
    summary: "Send a WAV as Opus or a Y4M as VP8 over RTP",
    help: "Usage: parley send ...\n\nSend a WAV as Opus or a Y4M as VP8 over RTP. Not yet available in this build.",
    run: { _ in
        printError("parley send: not yet available in this build")
        return ExitStatus.usage
    }
)
