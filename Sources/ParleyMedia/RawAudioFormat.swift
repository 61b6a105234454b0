import CSndFile

/// A headerless audio encoding, named by the file extension that conventionally marks it
/// (Asterisk's `sln`, sox's `ul`/`al`, Dialogic `vox`, raw `gsm`). Headerless bytes carry no
/// rate, channel count or encoding, so whoever reads them has to be told; every other format
/// is recognised from its bytes and needs no name.
///
/// | extension | encoding | rate |
/// |---|---|---|
/// | `sln` | signed 16-bit little-endian PCM, mono | 8 kHz |
/// | `sln12`, `sln16`, `sln24`, `sln32`, `sln44`, `sln48`, `sln96`, `sln192` | the same | 12 ... 192 kHz (`sln44`: 44.1 kHz) |
/// | `ul` | G.711 μ-law, mono | 8 kHz |
/// | `al` | G.711 A-law, mono | 8 kHz |
/// | `vox`, `vox6` | Dialogic (OKI) ADPCM, mono | 8 kHz, 6 kHz |
/// | `gsm` | GSM 06.10, mono | 8 kHz |
///
/// Threading: a value type; freely sendable.
public struct RawAudioFormat: Sendable, Equatable, CustomStringConvertible {
    /// The extension that names it (lower case, no dot).
    public let name: String
    /// Samples per second per channel, in Hz.
    public let sampleRate: Int
    /// Interleaved channels (1 for every format in the table).
    public let channels: Int
    /// libsndfile's `SF_FORMAT_RAW | subtype | endianness`.
    let sndfileFormat: Int32

    /// Every extension ``init(extension:)`` accepts, in the table's order.
    public static let extensions: [String] = table.map(\.0)

    private static let table: [(String, Int, Int32)] = {
        let pcm16 = Int32(SF_FORMAT_PCM_16) | Int32(SF_ENDIAN_LITTLE)
        var t: [(String, Int, Int32)] = [("sln", 8000, pcm16)]
        for (suffix, rate) in [(12, 12_000), (16, 16_000), (24, 24_000), (32, 32_000), (44, 44_100),
                               (48, 48_000), (96, 96_000), (192, 192_000)] {
            t.append(("sln\(suffix)", rate, pcm16))
        }
        t += [("ul", 8000, Int32(SF_FORMAT_ULAW)), ("al", 8000, Int32(SF_FORMAT_ALAW)),
              ("vox", 8000, Int32(SF_FORMAT_VOX_ADPCM)), ("vox6", 6000, Int32(SF_FORMAT_VOX_ADPCM)),
              ("gsm", 8000, Int32(SF_FORMAT_GSM610))]
        return t
    }()

    /// The format named by `ext` (case-insensitive, with or without a leading dot); nil when
    /// it names no headerless format.
    public init?(extension ext: String) {
        let key = String((ext.hasPrefix(".") ? ext.dropFirst() : Substring(ext)).lowercased())
        guard let row = Self.table.first(where: { $0.0 == key }) else { return nil }
        name = row.0
        sampleRate = row.1
        channels = 1
        sndfileFormat = Int32(SF_FORMAT_RAW) | row.2
    }

    public var description: String { name }
}
