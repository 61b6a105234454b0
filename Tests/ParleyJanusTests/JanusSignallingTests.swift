// The WebRTC signalling's JSON: JSEP and trickle members as Janus reads and writes them, and the
// subscriber events' streams as Janus 1.1 sends them, and ParleySDP answering Janus's offer.

import Foundation
import ParleyJanus
import ParleySDP
import Testing

struct JanusSignallingTests {
    private func json(_ text: String) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }

    @Test func jsepRoundTripsAndRefusesWhatIsNotOne() throws {
        let offer = JanusJSEP(type: .offer, sdp: "v=0\r\n")
        #expect(try JanusJSEP(offer.json) == offer)
        #expect(try JanusJSEP(json(#"{"type":"answer","sdp":"v=0"}"#)) == JanusJSEP(type: .answer, sdp: "v=0"))
        for bad in [#"{"type":"pranswer","sdp":"v=0"}"#, #"{"sdp":"v=0"}"#, #"{"type":"offer"}"#, #"{"type":"offer","sdp":3}"#, "[]"] {
            #expect(throws: JanusError.self, "\(bad)") { try JanusJSEP(json(bad)) }
        }
    }

    @Test func trickleMembers() throws {
        let line = "candidate:1 1 udp 2015363327 10.77.0.1 39506 typ host"
        let candidate = JanusTrickle.candidate(line, sdpMid: "0", sdpMLineIndex: 0)
        #expect(candidate.json == ["candidate": .string(line), "sdpMid": "0", "sdpMLineIndex": 0])
        #expect(JanusTrickle.completed.json == ["completed": true])
        #expect(JanusTrickle(candidate.json) == candidate)
        #expect(JanusTrickle(["completed": true]) == .completed)
        #expect(JanusTrickle(["completed": false]) == nil)
        #expect(JanusTrickle(["sdpMid": "0"]) == nil)

        // Janus's own trickles, one or several, as long-poll events.
        let one = JanusEvent.other(kind: "trickle", message: ["janus": "trickle", "session_id": 1, "sender": 7,
                                                              "candidate": ["candidate": .string(line), "sdpMid": "0", "sdpMLineIndex": 0]])
        #expect(JanusTrickle.trickles(in: one)?.sender == 7)
        #expect(JanusTrickle.trickles(in: one)?.trickles == [candidate])
        let done = JanusEvent.other(kind: "trickle", message: ["janus": "trickle", "sender": 7, "candidate": ["completed": true]])
        #expect(JanusTrickle.trickles(in: done)?.trickles == [.completed])
        let many = JanusEvent.other(kind: "trickle", message: ["janus": "trickle", "sender": 7,
                                                               "candidates": [["candidate": .string(line)], ["completed": true]]])
        #expect(JanusTrickle.trickles(in: many)?.trickles == [.candidate(line, sdpMid: nil, sdpMLineIndex: nil), .completed])
        #expect(JanusTrickle.trickles(in: .webrtcUp(sender: 7)) == nil)
    }

    /// Janus 1.1.2's `updated` event after one of two publishers left.
    @Test func subscriberStreams() throws {
        let updated = try json("""
            {"videoroom":"updated","room":5252,"streams":[
             {"type":"audio","mindex":0,"mid":"0","send":true,"active":false,"ready":false},
             {"type":"audio","mindex":1,"mid":"1","send":true,"active":true,"ready":true,"feed_id":8942005478092243,
              "feed_mid":"0","feed_display":"browser","codec":"opus"}]}
            """)
        #expect(VideoRoomSubscriberEvent(updated) == .updated(room: 5252, streams: [
            VideoRoomSubscribedStream(mindex: 0, mid: "0", type: "audio", active: false),
            VideoRoomSubscribedStream(mindex: 1, mid: "1", type: "audio", active: true, feedID: 8_942_005_478_092_243,
                                      feedMid: "0", feedDisplay: "browser", codec: "opus"),
        ]))
        let attached = try json(#"{"videoroom":"attached","room":1,"streams":[{"type":"video","mindex":0,"mid":"v","feed_id":2},{"mid":"x"}]}"#)
        #expect(VideoRoomSubscriberEvent(attached) == .attached(room: 1, streams: [
            VideoRoomSubscribedStream(mindex: 0, mid: "v", type: "video", feedID: 2),
        ]))
        #expect(VideoRoomSubscriberEvent(try json(#"{"videoroom":"event","room":1,"started":"ok"}"#)) == .started)
        #expect(VideoRoomSubscriberEvent(try json(#"{"videoroom":"event","room":1,"paused":"ok"}"#)) == .paused)
        #expect(VideoRoomSubscriberEvent(try json(#"{"videoroom":"event","room":1,"left":"ok"}"#)) == .left)
        #expect(VideoRoomSubscriberEvent(try json(#"{"videoroom":"event","error_code":428,"error":"No such feed (5)"}"#))
                == .error(code: VideoRoomHandle.ErrorCode.noSuchFeed, text: "No such feed (5)"))
        let other = try json(#"{"videoroom":"event","switched":"ok"}"#)
        #expect(VideoRoomSubscriberEvent(other) == .other(other))
    }

    /// Janus 1.1.2's offer to a subscriber after the first of its two publishers left: ParleySDP
    /// reads it and answers with the section of the publisher that left inactive, the other
    /// receive-only, on the same transport.
    @Test func parleySDPAnswersJanussSubscriberOffer() throws {
        let sdp = [
            "v=0", "o=- 1796560071233305 2 IN IP4 127.0.0.1", "s=VideoRoom 5252", "t=0 0", "a=group:BUNDLE 0 1",
            "a=ice-options:trickle",
            "a=fingerprint:sha-256 8B:52:27:85:72:16:B5:FC:20:12:35:20:5F:46:74:4A:65:F5:30:55:3B:64:BD:85:93:F7:6D:18:3B:A7:DE:F0",
            "a=extmap-allow-mixed", "a=msid-semantic: WMS *",
            "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 127.0.0.1", "a=inactive", "a=mid:0", "a=rtcp-mux",
            "a=ice-ufrag:qOOw", "a=ice-pwd:HowTM2zJjTpowNVsGdF9l4", "a=ice-options:trickle", "a=setup:actpass",
            "a=rtpmap:111 opus/48000/2", "a=rtcp-fb:111 transport-cc", "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
            "a=candidate:1 1 udp 2015363327 10.77.0.1 39506 typ host", "a=end-of-candidates",
            "m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 127.0.0.1", "a=sendonly", "a=mid:1", "a=rtcp-mux",
            "a=ice-ufrag:qOOw", "a=ice-pwd:HowTM2zJjTpowNVsGdF9l4", "a=ice-options:trickle", "a=setup:actpass",
            "a=rtpmap:111 opus/48000/2", "a=rtcp-fb:111 transport-cc",
            "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level", "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
            "a=fmtp:111 useinbandfec=1", "a=msid:janus janus1", "a=ssrc:4056523254 cname:janus",
            "a=candidate:1 1 udp 2015363327 10.77.0.1 39506 typ host", "a=end-of-candidates", "",
        ].joined(separator: "\r\n")
        let offer = try JSEPDescription(parsing: JanusJSEP(["type": "offer", "sdp": .string(sdp)]).sdp, kind: .offer)
        #expect(offer.bundle == ["0", "1"])
        #expect(offer.media.map(\.direction) == [.inactive, .sendonly])
        #expect(offer.media.allSatisfy { offer.iceCredentials(of: $0)?.usernameFragment == "qOOw" && $0.candidates.count == 1 && $0.endOfCandidates })
        #expect(offer.media[1].ssrcs == [4_056_523_254])
        let local = JSEPLocal(ice: .random(), fingerprint: try SDPFingerprint.sha256([UInt8](repeating: 0xAB, count: 32)),
                              cname: "parley", audioSSRC: 1, videoSSRC: 2)
        let answer = try JSEPDescription.answer(to: offer, local: local) { _ in .receiveOnly }
        #expect(answer.media.map(\.mid) == ["0", "1"])
        #expect(answer.media.map(\.direction) == [.inactive, .recvonly])
        #expect(answer.media.allSatisfy { !$0.isRejected && $0.codecs.first?.payloadType == 111 })
        #expect(answer.bundle == ["0", "1"])
        #expect(answer.setup(of: answer.media[0]) == .active)
        // What goes back to Janus reads back the same.
        #expect(try JSEPDescription(parsing: answer.text, kind: .answer) == answer)
    }
}
