/// `parley devices`: not yet available in this build.
let devicesCommand = Command(
    name: "devices",
    summary: "List ALSA PCMs and V4L2 video nodes",
    help: "Usage: parley devices ...\n\nList ALSA PCMs and V4L2 video nodes. Not yet available in this build.",
    run: { _ in
        printError("parley devices: not yet available in this build")
        return ExitStatus.usage
    }
)
