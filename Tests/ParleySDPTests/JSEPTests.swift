import Foundation
import ParleySDP
import Testing

/// A browser's offer of audio, video and a data channel, as Chromium writes it (its
/// fingerprint's bytes made up).
private let browserOffer = """
v=0
o=- 4611731400430051336 2 IN IP4 127.0.0.1
s=-
t=0 0
a=group:BUNDLE 0 1 2
a=extmap-allow-mixed
a=msid-semantic: WMS stream1
m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126
c=IN IP4 0.0.0.0
a=rtcp:9 IN IP4 0.0.0.0
a=candidate:1467250027 1 udp 2122260223 10.77.0.2 46243 typ host generation 0 network-id 1
a=ice-ufrag:Xs7w
a=ice-pwd:9wQ+Gx3HZ7o6ylqkHNqC8dXM
a=ice-options:trickle
a=fingerprint:sha-256 0B:30:55:7A:9F:C4:E9:0E:33:58:7D:A2:C7:EC:11:36:5B:80:A5:CA:EF:14:39:5E:83:A8:CD:F2:17:3C:61:86
a=setup:actpass
a=mid:0
a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level
a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time
a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01
a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
a=sendrecv
a=msid:stream1 track1
a=rtcp-mux
a=rtcp-rsize
a=rtpmap:111 opus/48000/2
a=rtcp-fb:111 transport-cc
a=fmtp:111 minptime=10;useinbandfec=1
a=rtpmap:63 red/48000/2
a=fmtp:63 111/111
a=rtpmap:9 G722/8000
a=rtpmap:0 PCMU/8000
a=rtpmap:8 PCMA/8000
a=rtpmap:13 CN/8000
a=rtpmap:110 telephone-event/48000
a=rtpmap:126 telephone-event/8000
a=ssrc:3735928559 cname:abcdEFGH
a=ssrc:3735928559 msid:stream1 track1
m=video 9 UDP/TLS/RTP/SAVPF 96 97 102
c=IN IP4 0.0.0.0
a=rtcp:9 IN IP4 0.0.0.0
a=ice-ufrag:Xs7w
a=ice-pwd:9wQ+Gx3HZ7o6ylqkHNqC8dXM
a=ice-options:trickle
a=fingerprint:sha-256 0B:30:55:7A:9F:C4:E9:0E:33:58:7D:A2:C7:EC:11:36:5B:80:A5:CA:EF:14:39:5E:83:A8:CD:F2:17:3C:61:86
a=setup:actpass
a=mid:1
a=extmap:14 urn:ietf:params:rtp-hdrext:toffset
a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid
a=sendrecv
a=msid:stream1 track2
a=rtcp-mux
a=rtcp-rsize
a=rtpmap:96 VP8/90000
a=rtcp-fb:96 goog-remb
a=rtcp-fb:96 transport-cc
a=rtcp-fb:96 ccm fir
a=rtcp-fb:96 nack
a=rtcp-fb:96 nack pli
a=rtpmap:97 rtx/90000
a=fmtp:97 apt=96
a=rtpmap:102 H264/90000
a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f
a=ssrc-group:FID 1111 2222
a=ssrc:1111 cname:abcdEFGH
a=ssrc:2222 cname:abcdEFGH
m=application 9 UDP/DTLS/SCTP webrtc-datachannel
c=IN IP4 0.0.0.0
a=ice-ufrag:Xs7w
a=ice-pwd:9wQ+Gx3HZ7o6ylqkHNqC8dXM
a=ice-options:trickle
a=fingerprint:sha-256 0B:30:55:7A:9F:C4:E9:0E:33:58:7D:A2:C7:EC:11:36:5B:80:A5:CA:EF:14:39:5E:83:A8:CD:F2:17:3C:61:86
a=setup:actpass
a=mid:2
a=sctp-port:5000
a=max-message-size:262144
"""

private func local(ssrcs: (UInt32, UInt32) = (0x1111_0001, 0x1111_0002)) throws -> JSEPLocal {
    JSEPLocal(ice: try ICECredentials(usernameFragment: "prly", password: "abcdefghijklmnopqrstuvwx"),
              fingerprint: try SDPFingerprint(parsing: "sha-256 " + Array(repeating: "0F", count: 32).joined(separator: ":")),
              candidates: ["1 1 udp 2130706431 10.77.0.1 40000 typ host"], candidatesComplete: true,
              cname: "parley-cname", audioSSRC: ssrcs.0, videoSSRC: ssrcs.1)
}

@Suite struct JSEPTests {
    @Test func readsABrowsersOffer() throws {
        let offer = try JSEPDescription(parsing: browserOffer, kind: .offer)
        #expect(offer.bundle == ["0", "1", "2"])
        #expect(offer.media.map(\.kind) == ["audio", "video", "application"])
        let audio = offer.media[0]
        #expect(offer.iceCredentials(of: audio) == (try ICECredentials(usernameFragment: "Xs7w", password: "9wQ+Gx3HZ7o6ylqkHNqC8dXM")))
        #expect(offer.fingerprint(of: audio)?.bytes.count == 32 && offer.setup(of: audio) == .actpass)
        #expect(audio.codec(named: "opus", clockRate: 48_000)?.payloadType == 111)
        #expect(audio.codec(named: "opus", clockRate: 48_000)?.feedback == ["transport-cc"])
        #expect(audio.extensionID(JSEPExtension.audioLevel) == 1 && audio.extensionID(JSEPExtension.mid) == 4)
        #expect(audio.ssrcs == [3_735_928_559] && audio.msid == "stream1 track1")
        #expect(audio.candidates.count == 1 && audio.rtcpMux && audio.rtcpReducedSize)
        let video = offer.media[1]
        #expect(video.codec(named: "vp8", clockRate: 90_000)?.feedback == ["goog-remb", "transport-cc", "ccm fir", "nack", "nack pli"])
        #expect(video.sourceGroups == ["FID 1111 2222"] && video.ssrcs == [1111, 2222])
        #expect(offer.media[2].sctpPort == 5000 && offer.media[2].maxMessageSize == 262_144)
    }

    @Test func ofSeveralFingerprintsTheSHA256OneIsKept() throws {
        // aiortc's way: one line per hash, SHA-256 first; here also one before it.
        let sha256 = "a=fingerprint:sha-256 0B:30:55:7A:9F:C4:E9:0E:33:58:7D:A2:C7:EC:11:36:5B:80:A5:CA:EF:14:39:5E:83:A8:CD:F2:17:3C:61:86"
        let sha512 = "a=fingerprint:sha-512 " + Array(repeating: "AB", count: 64).joined(separator: ":")
        let sha384 = "a=fingerprint:sha-384 " + Array(repeating: "CD", count: 48).joined(separator: ":")
        let text = browserOffer.replacingOccurrences(of: sha256, with: [sha512, sha256, sha384].joined(separator: "\n"))
        let offer = try JSEPDescription(parsing: text, kind: .offer)
        for m in offer.media {
            #expect(offer.fingerprint(of: m)?.algorithm == "sha-256")
            #expect(offer.fingerprint(of: m)?.bytes.first == 0x0B)
        }
    }

    @Test func answersABrowserWithWhatParleyHas() throws {
        let offer = try JSEPDescription(parsing: browserOffer, kind: .offer)
        let me = try local()
        let answer = try JSEPDescription.answer(to: offer, local: me) { _ in .both }
        #expect(answer.kind == .answer && answer.media.map(\.mid) == ["0", "1", "2"])
        let audio = answer.media[0], video = answer.media[1], data = answer.media[2]
        #expect(audio.codecs.map(\.payloadType) == [111] && audio.codecs[0].parameters == "minptime=10;useinbandfec=1")
        #expect(audio.extensions.map(\.uri) == [JSEPExtension.audioLevel, JSEPExtension.mid])
        #expect(audio.extensions.map(\.id) == [1, 4], "the offer's ids are kept")
        #expect(video.codecs.map(\.name) == ["VP8"] && video.codecs[0].feedback == ["goog-remb", "nack", "nack pli"])
        #expect(video.extensions.map(\.uri) == [JSEPExtension.mid])
        #expect(audio.direction == .sendrecv && video.direction == .sendrecv)
        #expect(data.isRejected && answer.bundle == ["0", "1"], "no data channel asked for: rejected and out of the bundle")
        #expect(audio.setup == .active && audio.fingerprint == me.fingerprint && audio.ice == me.ice)
        #expect(audio.ssrcs == [me.audioSSRC] && video.ssrcs == [me.videoSSRC])
        #expect(audio.candidates == me.candidates && audio.endOfCandidates && video.candidates.isEmpty)
        let withData = try JSEPDescription.answer(to: offer, local: me, dataChannel: true) { _ in .both }
        #expect(!withData.media[2].isRejected && withData.media[2].sctpPort == 5000 && withData.bundle == ["0", "1", "2"])

        let text = answer.text
        #expect(text.contains("a=group:BUNDLE 0 1\r\n") && text.contains("m=application 0 UDP/DTLS/SCTP webrtc-datachannel\r\n"))
        #expect(text.contains("a=setup:active\r\n") && text.contains("a=rtcp-rsize\r\n"))
        let back = try JSEPDescription(parsing: text, kind: .answer)
        #expect(back.media == answer.media && back.bundle == answer.bundle)
    }

    /// An SFU's offer to a subscriber: it sends, Parley only receives; a stream of a codec
    /// Parley lacks is rejected, the others kept.
    @Test func answersAnSFUsSubscriberOfferReceiveOnly() throws {
        var sfu = JSEPDescription.offer(local: try local(ssrcs: (77, 78)), audio: .sendOnly, video: .sendOnly)
        sfu.media[1].codecs = [JSEPCodec(payloadType: 102, name: "H264", clockRate: 90_000)]
        sfu.setup = nil
        let parsed = try JSEPDescription(parsing: sfu.text, kind: .offer)
        let answer = try JSEPDescription.answer(to: parsed, local: try local()) { _ in .receiveOnly }
        #expect(answer.media[0].direction == .recvonly && answer.media[0].sources.isEmpty && answer.media[0].msid == nil)
        #expect(answer.media[1].isRejected && answer.bundle == ["0"])
    }

    @Test func parleysOfferReadsBackAndLeavesTheRoleOpen() throws {
        let me = try local()
        let offer = JSEPDescription.offer(local: me, audio: .sendOnly, video: .both, dataChannel: true)
        #expect(offer.media.map(\.mid) == ["0", "1", "2"] && offer.bundle == ["0", "1", "2"])
        let back = try JSEPDescription(parsing: offer.text, kind: .offer)
        #expect(back.media == offer.media)
        #expect(back.media.allSatisfy { $0.setup == .actpass })
        #expect(back.media[0].direction == .sendonly && back.media[1].direction == .sendrecv)
        #expect(back.media[0].extensions.map(\.uri) == [JSEPExtension.audioLevel, JSEPExtension.mid])
        #expect(throws: JSEPError.self) { try JSEPDescription.answer(to: try JSEPDescription.answer(to: back, local: me) { _ in .both },
                                                                  local: me) { _ in .both } }
    }

    /// Each description WebRTC cannot use is refused, naming the section and field.
    @Test(arguments: [
        ("a=mid:0\r\n", "", "a=mid"),
        ("a=ice-pwd:9wQ+Gx3HZ7o6ylqkHNqC8dXM\r\n", "a=ice-pwd:short\r\n", "a=ice-pwd: not 22-256"),
        ("a=setup:actpass\r\n", "a=setup:sideways\r\n", "a=setup"),
        ("a=setup:actpass\r\n", "", "has no a=setup"),
        ("a=fingerprint:sha-256 ", "a=fingerprint:sha-256 ZZ:", "a=fingerprint"),
        ("a=ice-ufrag:Xs7w\r\n", "", "has no a=ice-ufrag/a=ice-pwd"),
        ("m=audio 9", "m=audio 99999", "m= port"),
    ])
    func refusesWithTheReason(original: String, replacement: String, fragment: String) throws {
        let one = browserOffer.replacingFirst(original.replacingOccurrences(of: "\r\n", with: "\n"),
                                              with: replacement.replacingOccurrences(of: "\r\n", with: "\n"))
        do {
            _ = try JSEPDescription(parsing: one.firstSection, kind: .offer)
            Issue.record("accepted with '\(replacement)' for '\(original)'")
        } catch {
            #expect("\(error)".contains(fragment), "\(error)")
        }
    }

    @Test func secretsAreNotPrinted() throws {
        let offer = try JSEPDescription(parsing: browserOffer, kind: .offer)
        for text in ["\(offer)", String(reflecting: offer), "\(offer.media[0])", "\(ICECredentials.random())"] {
            #expect(!text.contains("9wQ+Gx3HZ7o6ylqkHNqC8dXM"), "\(text)")
        }
        let random = ICECredentials.random()
        #expect(random.usernameFragment.count == 4 && random.password.count == 24 && random != ICECredentials.random())
    }
}

extension String {
    /// `self` with the first occurrence of `target` replaced.
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let r = range(of: target) else { return self }
        return replacingCharacters(in: r, with: replacement)
    }

    /// The session lines and the first m= section only.
    fileprivate var firstSection: String {
        let parts = components(separatedBy: "\nm=")
        return parts.count > 1 ? parts[0] + "\nm=" + parts[1] + "\n" : self
    }
}
