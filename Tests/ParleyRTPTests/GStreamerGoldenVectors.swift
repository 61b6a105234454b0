import Testing
import ParleyRTP

// Packets captured from GStreamer 1.22 (Debian 12) with fixed settings, so every header field is
// known:
//
//   gst-launch-1.0 audiotestsrc num-buffers=3 samplesperbuffer=960 freq=1000 ! audio/x-raw,rate=48000,channels=1 \
//     ! opusenc bitrate=32000 frame-size=20 ! rtpopuspay pt=111 ssrc=0x11223344 seqnum-offset=65534 \
//       timestamp-offset=4294966336 ! udpsink host=127.0.0.1 port=5050
//   gst-launch-1.0 videotestsrc num-buffers=2 pattern=ball ! video/x-raw,width=320,height=240,framerate=30/1 \
//     ! vp8enc deadline=1 target-bitrate=400000 ! rtpvp8pay pt=96 ssrc=0xcafe0001 seqnum-offset=100 \
//       timestamp-offset=90000 picture-id-mode=15-bit picture-id-offset=32767 mtu=400 ! udpsink ...
//
// (hex, one string per datagram; whitespace ignored)

private let gstreamerOpusPackets: [String] = [
    """
    80effffefffffc40112233447884551ab50d49066a0b067dbb1f48c7e4a834971cd59e0d952bf86934ee343f5284f05d
    49133f2cbd8f53cdce8f399d6a89b2168a1e164ddcaaccab744177a132d156529ae73a54ceac4ab87cc2749f1373cf51
    568078f0dbefda1b77931218b522a5af3b1b6b
    """,
    """
    806ffffffffffec81122334478ac32a2a04e075a827b9853fc8399e1aa8906ba91783e64321657b1e03cd2e178cac94f
    5cbd9c7d77b0ea99ae402f40206801004933a36a637ef21458144388f8d4a765b7aec131b3cf
    """,
    """
    806f0000000002881122334478a3caf8414670c7d64ab6fd1190923239c23e8dad4d577f68082db33856a7b5abbb4d40
    4b8a1e94214eded8bb14f093043b04ea22be78fb0c49f37458d4a765b7aec131b345
    """,
    """
    806f0001000006481122334478b2bbb7ecaad3b5aacaaf4ab5336ca510d4c3b869c78c009fe21220c02a12473fa87265
    0cf30dae62ee6034375fa1ab1dd933a1885df4b304c8aca6dbe3bad0a11cc9de8b63b3
    """,
]

private let gstreamerVP8Packets: [String] = [
    """
    8060006400015f90cafe00019080ffff3021009d012a4001f00000470885858899848802020418089e05f9bfe00fee8f
    482faabfac196d1e2bf89dfba7fd47d8cf7447f11fc35fdd3fea39c59f35fe85f8e7f919b045fd67f16b6447fa07fabf
    b6ef8b2fe9bed9bdb8fcb5fe87dc0ff8aff37ff13f941fd9bffff846fda0f666fd7280d1244abe41ae8f62ce9d3a74e9
    d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a3a4121ae0
    011c73a0f4769e9a8957c835d1e72583268b28d5477a6dec59d3a74e9be0033b1d623dcbd7fae5700fe8b2af906ba3d8
    b3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74e9d3a74
    e9d1c0feffab587b696fc7e5b1563fffbaffddf6bfbd7ff4b9f7fda3f7efe3f80bc725382c64b3986bd8c2fa6e36cf0d
    1dfe594b4c9b8a0e451fecc7ffff6665b4e433ff70ef30d4abbc793adc0b6ea96909ae7f6ea9e1bf127f5926bbe3d9a0
    2f96ab86884ebb7d4aadb7bb5a85b835
    """,
    """
    80e0006500015f90cafe00018080ffffd493ee2be5cec2f32f650d13216262bb8f305c1284860a575f146dbc4bc61cf8
    a10d3f2fb0ff07db5888acbeeb9a1f2df639fa9fefbd59a31706014e0fe89dd6f00c0373cea2be029918a4528407afe5
    a608aa8b471267047cb91ffecebef2674f49f15a52d590310d0662701ba1a6cbd7b1f092500aa0708176a0bdab6e6fc9
    999536715a3601d07c51b68c21f56b843e78fa6431cf42d4e776c26dc7fbacb5a8ebf1dc112a1507fa8359829773e394
    4b457ca05868be10e199153dec544cd672863c179da7ef72283c3d5079daae9cc26af4f4ddc23dab8a49cb0b81d5444c
    d8c3e37c268b53b6ed81146f2013faab2f5bfd230d2fcfbcc0439821e834c31aa5e9f0a30439bd803dd917d98176e847
    311764076c059ad54fa6fef11e21f22bc8c4cab6d8299bde8824fdddf8d4b63d9d16da3538fcde2869d34f994948c6a8
    cb1a23c7d04bbdddf99e6148af48c3efd20000
    """,
    """
    80e0006600016b47cafe0001908080007105002c110c001800188847f4001508005587ed9405177f387fe155e804d661
    a09cdc11a26d620fc481df70e700a4d5a8689179279ced00
    """,
]

@Suite struct GStreamerGoldenVectors {
    @Test func rtpopuspayPacketsParseToTheConfiguredFieldsAcrossTheWrap() throws {
        let packets = gstreamerOpusPackets.map(hex)
        var seqs: [UInt16] = []
        var timestamps: [UInt32] = []
        for (i, p) in packets.enumerated() {
            try parsed(p) { v in
                #expect(v.payloadType == 111)
                #expect(v.ssrc == 0x1122_3344)
                #expect(v.marker == (i == 0))  // first packet of the talkspurt
                #expect(v.csrcCount == 0 && v.extensionProfile == nil && !v.hasPadding)
                seqs.append(v.sequenceNumber)
                timestamps.append(v.timestamp)
                let samples = try? OpusRTP.samples48k(v.payload)
                #expect(samples == 960)  // TOC 0x78: config 15 (hybrid fullband 20 ms), one frame
            }
        }
        #expect(seqs == [65534, 65535, 0, 1])
        var u = TimestampUnwrapper()
        let ext = timestamps.map { u.unwrap($0) }
        #expect(ext[0] == 4_294_966_336)
        #expect(ext[2] - ext[1] == 960 && ext[3] - ext[2] == 960)  // 20 ms at 48 kHz after the encoder's pre-skip
    }

    @Test func packetsReserialiseByteForByte() throws {
        for p in (gstreamerOpusPackets + gstreamerVP8Packets).map(hex) {
            let again = try parsed(p) { v in try? RTPHeader(v).marshalled(payload: Array(v.payload)) }
            #expect(again == p)
        }
    }

    @Test func rtpvp8payKeyframeAndInterFrameDepacketizeWithPictureIDWrap() throws {
        let packets = gstreamerVP8Packets.map(hex)
        var depacketizer = VP8Depacketizer()
        var frames: [[UInt8]] = []
        var pictureIDs: [UInt16?] = []
        for p in packets {
            let (seq, ts, marker, payload) = try parsed(p) { v in (v.sequenceNumber, v.timestamp, v.marker, Array(v.payload)) }
            try parsed(p) { v in
                #expect(v.payloadType == 96 && v.ssrc == 0xCAFE_0001)
                #expect(v.bytes.count <= 400)  // mtu=400
            }
            let d = try payload.withUnsafeBytes { try VP8PayloadDescriptor(parsing: $0) }
            pictureIDs.append(d.pictureID)
            #expect(d.longPictureID && d.partitionIndex == 0)
            if let f = try payload.withUnsafeBytes({ try depacketizer.push(payload: $0, sequenceNumber: seq, timestamp: ts, marker: marker) }) {
                frames.append(f)
            }
        }
        #expect(pictureIDs == [0x7FFF, 0x7FFF, 0])
        #expect(frames.count == 2)
        #expect(frames[0].count == (400 - 16) + (355 - 16))
        let key = try frames[0].withUnsafeBytes { try VP8FrameHeader(parsing: $0) }
        #expect(key.isKeyframe && key.width == 320 && key.height == 240 && key.showFrame)
        #expect(key.firstPartitionSize > 0 && key.firstPartitionSize < frames[0].count)
        let inter = try frames[1].withUnsafeBytes { try VP8FrameHeader(parsing: $0) }
        #expect(!inter.isKeyframe)
    }
}
