// The WebRTC signalling's JSON: JSEP and trickle members as Janus reads and writes them, and the
// subscriber events' streams as Janus 1.1 sends them.

import Foundation
import ParleyJanus
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
}
