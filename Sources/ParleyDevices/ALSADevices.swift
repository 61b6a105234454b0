import CALSA
#if canImport(Glibc)
import Glibc
#endif

/// One PCM alsa-lib advertises (`snd_device_name_hint`).
public struct ALSADeviceHint: Sendable, Hashable {
    /// Which ways the PCM works.
    public enum Direction: String, Sendable { case capture, playback, both }
    /// The name to open (`default`, `hw:CARD=PCH,DEV=0`, `null`, ...).
    public var name: String
    /// alsa-lib's description, lines joined with " / ".
    public var description: String
    /// Capture, playback or both (alsa-lib's `IOID`; absent means both).
    public var direction: Direction
}

/// Lists PCMs.
public enum ALSADevices {
    /// PCMs alsa-lib advertises for all cards, plus the virtual ones its configuration defines
    /// (`null`, `default`, plugins). Cards are found through `/dev/snd` and `/proc/asound`.
    /// - Throws: ``ALSAError`` when alsa-lib cannot build the hint list.
    public static func pcms() throws(ALSAError) -> [ALSADeviceHint] {
        ALSALog.begin()
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        let r = snd_device_name_hint(-1, "pcm", &hints)
        guard r >= 0, let hints else {
            throw ALSAError.from(code: r, pcm: "*", operation: "snd_device_name_hint")
        }
        defer { snd_device_name_free_hint(hints) }
        func get(_ hint: UnsafeMutableRawPointer, _ key: String) -> String? {
            guard let p = snd_device_name_get_hint(hint, key) else { return nil }
            defer { free(p) }
            return String(cString: p)
        }
        var out: [ALSADeviceHint] = []
        var i = 0
        while let hint = hints[i] {
            i += 1
            guard let name = get(hint, "NAME") else { continue }
            let desc = (get(hint, "DESC") ?? "").split(separator: "\n").joined(separator: " / ")
            let dir: ALSADeviceHint.Direction
            switch get(hint, "IOID") {
            case "Input": dir = .capture
            case "Output": dir = .playback
            default: dir = .both
            }
            out.append(ALSADeviceHint(name: name, description: desc, direction: dir))
        }
        return out
    }

    /// Sound cards present (`/proc/asound/cards` via `snd_card_next`), as (index, name).
    public static func cards() -> [(index: Int, name: String)] {
        var out: [(Int, String)] = []
        var card: Int32 = -1
        while snd_card_next(&card) >= 0 && card >= 0 {
            var name: UnsafeMutablePointer<CChar>?
            if snd_card_get_longname(card, &name) >= 0, let name {
                out.append((Int(card), String(cString: name)))
                free(name)
            } else {
                out.append((Int(card), "card \(card)"))
            }
        }
        return out
    }
}
