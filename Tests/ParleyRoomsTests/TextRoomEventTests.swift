// TextRoomEvent and its JSON reader on Janus TextRoom's events as the plugin writes them, and on
// malformed bytes: each gives its typed error.

import ParleyRooms
import Testing

struct TextRoomEventTests {
    private func event(_ text: String) throws(TextRoomParseError) -> TextRoomEvent { try TextRoomEvent(parsing: Array(text.utf8)) }

    @Test func readsThePluginsEvents() throws {
        #expect(try event(#"{"textroom":"message","room":1234,"from":"42","date":"2026-12-06T16:55:39+0000","text":"hi \"you\" \u3053\ud83c\udf89\n"}"#)
                == .message(room: 1234, from: "42", text: "hi \"you\" こ🎉\n", date: "2026-12-06T16:55:39+0000", whisper: false))
        #expect(try event(#"{"textroom":"message","room":1,"from":"a","text":"x","whisper":true}"#)
                == .message(room: 1, from: "a", text: "x", date: "", whisper: true))
        #expect(try event(#"{"textroom":"join","room":7,"username":"carol-1f","display":"carol"}"#)
                == .joined(room: 7, TextRoomParticipant(username: "carol-1f", display: "carol")))
        #expect(try event(#"{"textroom":"leave","room":7,"username":"u"}"#) == .left(room: 7, username: "u"))
        #expect(try event(#"{ "textroom" : "success", "transaction" : "c1", "participants" : [ {"username":"a","display":"ann"}, {"username":"b"} ] }"#)
                == .success(transaction: "c1", participants: [.init(username: "a", display: "ann"), .init(username: "b", display: nil)]))
        #expect(try event(#"{"textroom":"error","error_code":419,"error":"Unauthorized (wrong pin)","transaction":"c1"}"#)
                == .error(transaction: "c1", code: 419, reason: "Unauthorized (wrong pin)"))
        #expect(try event(#"{"textroom":"destroyed","room":7}"#) == .destroyed(room: 7))
        #expect(try event(#"{"textroom":"event","result":"ok"}"#) == .other("event"))
    }

    @Test func malformedBytesAreTypedErrors() {
        #expect(throws: TextRoomParseError.invalidUTF8) { try TextRoomEvent(parsing: [0x7B, 0xFF, 0x7D]) }
        #expect(throws: TextRoomParseError.invalidJSON(offset: 12)) { try event(#"{"textroom":}"#) }
        #expect(throws: TextRoomParseError.invalidJSON(offset: 3)) { try event("[1,]") }
        #expect(throws: TextRoomParseError.invalidJSON(offset: 3)) { try event(#""a\x""#) }
        #expect(throws: TextRoomParseError.invalidJSON(offset: 7)) { try event(#""\ud800x""#) }   // a lone surrogate
        #expect(throws: TextRoomParseError.invalidJSON(offset: 1)) { try event("01") }
        #expect(throws: TextRoomParseError.invalidJSON(offset: 3)) { try event("{} {}") }
        #expect(throws: TextRoomParseError.invalidJSON(offset: 64)) { try event(String(repeating: "[", count: 100)) }
        #expect(throws: TextRoomParseError.notAnEvent) { try event(#"{"videoroom":"joined"}"#) }
        #expect(throws: TextRoomParseError.notAnEvent) { try event("[]") }
        #expect(throws: TextRoomParseError.missingField("from")) { try event(#"{"textroom":"message","text":"x"}"#) }
        #expect(throws: TextRoomParseError.missingField("text")) { try event(#"{"textroom":"message","from":"a","text":5}"#) }
        #expect(throws: TextRoomParseError.missingField("error_code")) { try event(#"{"textroom":"error"}"#) }
    }

    @Test func writtenJSONReadsBackTheSame() throws {
        let text = "q\"b\\n\n\t\u{1}\u{8}日本🎉"
        let value = ChatJSON.object(["text": .string(text), "n": .number("-1.5e3"), "list": .array([.null, .bool(true)])])
        let written = value.serialized
        #expect(written == #"{"list":[null,true],"n":-1.5e3,"text":"q\"b\\n\n\t\u0001\u0008日本🎉"}"#)
        #expect(try ChatJSON(parsing: Array(written.utf8)) == value)
    }
}
