import Foundation
import ParleyDevices

/// `parley devices`: the ALSA PCMs and V4L2 video nodes this machine offers.
let devicesCommand = Command(
    name: "devices",
    summary: "List ALSA PCMs and V4L2 video nodes",
    help: """
    Usage: parley devices

    Lists what Parley can open:
      - ALSA sound cards, then every PCM alsa-lib advertises (snd_device_name_hint), with the
        direction it works in. Any of these names (or a name defined in a configuration given
        through ALSA_CONFIG_PATH) can be passed to 'parley record --audio' / 'parley play --audio'.
      - V4L2 video nodes (/dev/video*), each with its card name, whether it captures, and the
        pixel formats it offers (formats libv4lconvert emulates are marked).
    Prints "none found" for a kind of device that is absent. Exit status 0 unless alsa-lib
    cannot list PCMs at all (1).
    """,
    run: { args in
        guard args.isEmpty else {
            printError("parley devices: unexpected argument '\(args[0])'\nUsage: parley devices")
            return ExitStatus.usage
        }
        var status = ExitStatus.success
        let cards = ALSADevices.cards()
        print("ALSA sound cards:")
        if cards.isEmpty {
            print("  none found (no /dev/snd cards; virtual PCMs below still work)")
        } else {
            for c in cards { print("  card \(c.index): \(c.name)") }
        }
        print("ALSA PCMs:")
        do {
            let pcms = try ALSADevices.pcms()
            if pcms.isEmpty { print("  none found") }
            let width = min(40, (pcms.map(\.name.count).max() ?? 0) + 2)
            for p in pcms {
                let dir = p.direction == .both ? "capture+playback" : p.direction.rawValue
                print("  " + p.name.padding(toLength: max(width, p.name.count + 1), withPad: " ", startingAt: 0)
                      + dir.padding(toLength: 18, withPad: " ", startingAt: 0) + p.description)
            }
        } catch {
            printError("parley devices: \(error)")
            status = ExitStatus.failure
        }
        print("V4L2 video nodes:")
        let nodes = V4L2Devices.list()
        if nodes.isEmpty {
            print("  none found (no /dev/video* nodes: no camera, or its driver is not loaded)")
        }
        for node in nodes {
            if let caps = node.capabilities {
                let kind = caps.canCapture ? (caps.canStream ? "capture" : "capture (no streaming)") : "not a capture node"
                print("  \(node.path)  \(caps.card) [\(caps.driver)]  \(kind)")
                if !node.formats.isEmpty {
                    print("    formats: " + node.formats.map { $0.fourcc + ($0.emulated ? "*" : "") }.joined(separator: " ")
                          + "  (* = converted by libv4lconvert)")
                }
            } else if let e = node.error {
                print("  \(node.path)  unusable: \(e)")
            }
        }
        return status
    }
)
