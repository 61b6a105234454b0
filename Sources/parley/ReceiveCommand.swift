/// `parley receive`: not yet available in this build.
let receiveCommand = Command(
    name: "receive",
    summary: "Receive RTP Opus or VP8 into a file",
    help: "Usage: parley receive ...\n\nReceive RTP Opus or VP8 into a file. Not yet available in this build.",
    run: { _ in
        printError("parley receive: not yet available in this build")
        return ExitStatus.usage
    }
)
