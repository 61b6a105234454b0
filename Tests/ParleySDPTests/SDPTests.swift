import ParleySDP
import Testing

/// What `ffmpeg -re -i speech.wav -c:a libopus -f rtp -srtp_out_suite AES_CM_128_HMAC_SHA1_80
/// -srtp_out_params KEY srtp://127.0.0.1:5004 -sdp_file out.sdp` writes (LF line ends; its
/// crypto line sits under RTP/AVP), with an fmtp line added.
private let ffmpegSDP = """
v=0
o=- 0 0 IN IP4 127.0.0.1
s=No Name
c=IN IP4 127.0.0.1
t=0 0
a=tool:libavformat LIBAVFORMAT_VERSION
m=audio 5004 RTP/AVP 97
b=AS:64
a=rtpmap:97 opus/48000/2
a=fmtp:97 sprop-stereo=0
a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz

"""

@Suite struct SDPTests {
    @Test func readsWhatFFmpegWrites() throws {
        let sdp = try SessionDescription(parsing: ffmpegSDP)
        #expect(sdp.sessionName == "No Name")
        #expect(sdp.connectionAddress == "127.0.0.1")
        let audio = try #require(sdp.firstMedia("audio"))
        #expect(audio.port == 5004 && audio.proto == "RTP/AVP" && !audio.isSecure)
        #expect(audio.payloadTypes == [97])
        #expect(audio.rtpMap(for: 97) == SDPRTPMap(payloadType: 97, encoding: "opus", clockRate: 48_000, channels: 2))
        #expect(audio.formatParameters(for: 97) == "sprop-stereo=0")
        #expect(audio.cryptos == [SDPCrypto(tag: 1, suite: "AES_CM_128_HMAC_SHA1_80", key: "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz")])
        #expect(sdp.address(of: audio) == "127.0.0.1")
        #expect(sdp.attributes == [SDPAttribute("tool", "libavformat LIBAVFORMAT_VERSION")])
    }

    @Test func writesWhatItReadsWithCRLF() throws {
        var audio = SDPMedia(media: "audio", port: 40_000, proto: "RTP/SAVP", formats: ["111"])
        audio.attributes = [
            SDPAttribute("rtpmap", "111 opus/48000/2"),
            SDPAttribute("fmtp", "111 minptime=10;useinbandfec=1"),
            SDPAttribute("extmap", "1 urn:ietf:params:rtp-hdrext:ssrc-audio-level vad=on"),
            SDPCrypto(suite: "AEAD_AES_128_GCM", key: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw==", keySuffix: "|2^31").attribute,
            SDPAttribute("sendonly"),
        ]
        let sdp = SessionDescription(connectionAddress: "192.0.2.1", media: [audio])
        let text = sdp.text
        #expect(text.hasPrefix("v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=Parley\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 40000 RTP/SAVP 111\r\n"))
        #expect(text.hasSuffix("a=crypto:1 AEAD_AES_128_GCM inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw==|2^31\r\na=sendonly\r\n"))
        let back = try SessionDescription(parsing: text)
        #expect(back == sdp)
        #expect(back.media[0].extensionMaps == [SDPExtensionMap(id: 1, uri: "urn:ietf:params:rtp-hdrext:ssrc-audio-level")])
        #expect(back.media[0].cryptos.first?.keySuffix == "|2^31")
    }

    @Test func descriptionsNeverShowTheKey() throws {
        let sdp = try SessionDescription(parsing: ffmpegSDP)
        for text in [String(describing: sdp), String(reflecting: sdp), "\(sdp.media[0].cryptos)", "\(sdp.media[0].attributes)"] {
            #expect(!text.contains("WVNfX19z"), "\(text)")
        }
    }

    /// Each malformed description names its line and field.
    @Test(arguments: [
        ("", 0, "v="),
        ("o=- 0 0 IN IP4 1.2.3.4\n", 1, "v="),
        ("v=1\n", 1, "v="),
        ("v=0\no=- 0 0 IN IP4\ns=x\n", 2, "o="),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\n", 0, "s="),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nc=IN IP5 1.2.3.4\n", 4, "c= address type"),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nm=audio 70000 RTP/AVP 0\n", 4, "m= port"),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nm=audio 5004 RTP/AVP 200\n", 4, "m= format"),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nm=audio 5004 RTP/AVP\n", 4, "m="),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nm=audio 5004 RTP/AVP 96\na=rtpmap:96 opus\n", 5, "a=rtpmap encoding"),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nm=audio 5004 RTP/AVP 96\na=rtpmap:96 opus/fast/2\n", 5, "a=rtpmap clock rate"),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nm=audio 5004 RTP/AVP 96\na=rtpmap:300 opus/48000\n", 5, "a=rtpmap payload type"),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nm=audio 5004 RTP/AVP 96\na=extmap:0 urn:x\n", 5, "a=extmap id"),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nm=audio 5004 RTP/SAVP 96\na=crypto:1 AES_CM_128_HMAC_SHA1_80 uri:x\n", 5, "a=crypto key parameters"),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nm=audio 5004 RTP/SAVP 96\na=crypto:1 AES_CM_128_HMAC_SHA1_80\n", 5, "a=crypto"),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nm=audio 5004 RTP/SAVP 96\na=fmtp:x y\n", 5, "a=fmtp payload type"),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nx=1\n", 4, "x="),
        ("v=0\no=- 0 0 IN IP4 1.2.3.4\ns=x\nnot a line\n", 4, "line"),
    ])
    func malformedDescriptionsNameTheLineAndField(_ text: String, _ line: Int, _ field: String) {
        do {
            _ = try SessionDescription(parsing: text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.line == line && error.field == field, "\(error)")
            #expect(error.description.contains(field))
        }
    }

    @Test func everyTruncationOfARealDescriptionParsesOrThrows() {
        let bytes = Array(ffmpegSDP.utf8)
        var accepted = 0
        for n in 0...bytes.count {
            if (try? SessionDescription(parsing: String(decoding: bytes[0..<n], as: UTF8.self))) != nil { accepted += 1 }
        }
        #expect(accepted > 0 && accepted < bytes.count)
    }
}
