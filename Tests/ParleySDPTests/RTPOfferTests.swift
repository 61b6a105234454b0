import ParleySDP
import ParleySRTP
import Testing

/// What GStreamer's and ffmpeg's RTP senders describe: one Opus section, the key under RTP/AVP.
private let ffmpegOffer = """
    v=0
    o=- 0 0 IN IP4 127.0.0.1
    s=No Name
    c=IN IP4 127.0.0.1
    t=0 0
    m=audio 5004 RTP/AVP 97
    a=rtpmap:97 opus/48000/2
    a=fmtp:97 sprop-stereo=0;useinbandfec=1
    a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz

    """

private func callOffer(key: SRTPKey?) -> RTPOffer {
    var audio = RTPStreamOffer(codec: .opus(channels: 1, fec: true, dtx: false), payloadType: 111, port: 5010, ssrc: 0xABCD,
                               cname: "carlo", crypto: key?.sdpCrypto)
    audio.mid = "0"
    var video = RTPStreamOffer(codec: .vp8, payloadType: 96, port: 5010, ssrc: 0x1234, cname: "carlo", crypto: key?.sdpCrypto)
    video.mid = "1"
    video.nack = true
    video.pictureLoss = true
    video.rtcpMux = true
    video.pictureSize = (320, 240)
    video.framesPerSecond = 29.97
    return RTPOffer(host: "192.0.2.7", sessionName: "parley call", streams: [audio, video])
}

@Suite struct RTPOfferTests {
    @Test func aBundledCallOfferWritesAndReadsBack() throws {
        let key = try SRTPKey.generate()
        let offer = callOffer(key: key)
        let text = offer.description.text
        let lines = text.split(separator: "\r\n").map(String.init)
        #expect(lines.contains("a=group:BUNDLE 0 1"))
        #expect(lines.contains("m=audio 5010 RTP/SAVP 111") && lines.contains("m=video 5010 RTP/SAVP 96"))
        #expect(lines.contains("a=fmtp:111 minptime=10;useinbandfec=1"))
        #expect(lines.contains("a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level"))
        #expect(lines.contains("a=imageattr:96 send [x=320,y=240]") && lines.contains("a=framerate:29.97"))
        #expect(lines.contains("a=ssrc:\(0xABCD) cname:carlo") && lines.contains("a=ssrc:\(0x1234) cname:carlo"))
        #expect(lines.filter { $0.hasPrefix("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:") }.count == 2)
        let back = try RTPOffer(parsing: text)
        #expect(back.host == "192.0.2.7" && back.sessionName == "parley call")
        #expect(back.streams == offer.streams)
        #expect(back.refused.isEmpty)
        try back.checkBundled()
        let audioKey = try SRTPKey(try #require(back.audio?.crypto))
        #expect(audioKey == key)
    }

    @Test func readsWhatFFmpegWrites() throws {
        let offer = try RTPOffer(parsing: ffmpegOffer)
        let audio = try #require(offer.first)
        #expect(audio.codec == .opus(channels: 1, fec: true, dtx: false))
        #expect(audio.payloadType == 97 && audio.port == 5004 && audio.isSecure && audio.ssrc == nil && audio.audioLevelID == nil)
        #expect(offer.video == nil && offer.host == "127.0.0.1")
        #expect(try SRTPKey(try #require(audio.crypto)).suite == .aesCM128HMACSHA1_80)
    }

    @Test func aOneStreamOfferHasNoBundleAndStereoOpusSaysSo() throws {
        let stream = RTPStreamOffer(codec: .opus(channels: 2, fec: false, dtx: true), payloadType: 100, port: 6000, ssrc: 9, cname: "parley")
        let text = RTPOffer(host: "127.0.0.1", streams: [stream]).description.text
        #expect(!text.contains("a=group") && !text.contains("a=mid"))
        #expect(text.contains("a=fmtp:100 minptime=10;useinbandfec=0;stereo=1;sprop-stereo=1;usedtx=1\r\n"))
        #expect(try RTPOffer(parsing: text).streams == [stream])
    }

    /// Each offer Parley cannot take part in is refused with its reason.
    @Test(arguments: [
        ("m=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\n", "no m=audio or m=video section"),
        ("m=audio 5000 RTP/AVP 0 97\r\na=rtpmap:97 PCMA/8000\r\n", "it offers payload type 0, PCMA/8000"),
        ("m=audio 5000 RTP/SAVP 111\r\na=rtpmap:111 opus/48000/2\r\n", "m=audio is RTP/SAVP but has no a=crypto: line"),
        ("m=audio 5000 RTP/AVP 111\r\na=ssrc:x cname:y\r\n", "a=ssrc"),
    ])
    func refusesWithTheReason(section: String, fragment: String) {
        let text = "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=x\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" + section
        do {
            _ = try RTPOffer(parsing: text)
            Issue.record("accepted: \(section)")
        } catch {
            #expect("\(error)".contains(fragment), "\(error)")
        }
    }

    @Test func anUnusableVideoSectionIsListedAndTheAudioKept() throws {
        let text = "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=x\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            + "m=audio 5000 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\nm=video 5000 RTP/AVP 97\r\na=rtpmap:97 H264/90000\r\n"
        let offer = try RTPOffer(parsing: text)
        #expect(offer.streams.count == 1 && offer.video == nil)
        #expect(offer.refused == [.noCodec(media: "video", offered: ["H264/90000"])])
    }

    /// Audio and video on one socket: one port, one key, their own SSRCs and payload types.
    @Test func checkBundledNamesWhatDiffers() throws {
        let key = try SRTPKey.generate()
        var cases: [(RTPOffer, String)] = []
        var o = callOffer(key: key)
        o.streams[1].port = 5012
        cases.append((o, "one port"))
        o = callOffer(key: key)
        o.streams[1].ssrc = nil
        cases.append((o, "no a=ssrc line"))
        o = callOffer(key: key)
        o.streams[1].ssrc = o.streams[0].ssrc
        cases.append((o, "the audio's SSRC"))
        o = callOffer(key: key)
        o.streams[1].payloadType = 111
        cases.append((o, "the audio's payload type"))
        o = callOffer(key: key)
        o.streams[1].crypto = try SRTPKey.generate().sdpCrypto
        cases.append((o, "another key"))
        o = callOffer(key: key)
        o.streams[1].crypto = nil
        o.streams[1].isSecure = false
        cases.append((o, "plain RTP"))
        for (offer, fragment) in cases {
            #expect(throws: RTPOfferError.self, "\(fragment)") { try offer.checkBundled() }
            do { try offer.checkBundled() } catch { #expect("\(error)".contains(fragment), "\(error)") }
        }
        try callOffer(key: nil).checkBundled()
    }

    @Test func aKeyOfAnUnknownSuiteOrBadBase64IsATypedErrorThatHidesTheKey() throws {
        let bad = SDPCrypto(suite: "F8_128_HMAC_SHA1_80", key: "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz")
        #expect(throws: SRTPError.unknownSuite("F8_128_HMAC_SHA1_80")) { try SRTPKey(bad) }
        let garbled = SDPCrypto(suite: "AES_CM_128_HMAC_SHA1_80", key: "not base64!")
        do {
            _ = try SRTPKey(garbled)
            Issue.record("accepted a garbled key")
        } catch {
            #expect(!"\(error)".contains("not base64!"))
        }
        let offer = callOffer(key: try SRTPKey.generate())
        for text in ["\(offer)", "\(offer.streams)", String(reflecting: offer)] {
            #expect(!text.contains("inline:"), "\(text)")
        }
    }
}
