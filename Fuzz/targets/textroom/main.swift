// libFuzzer target: Janus TextRoom events as they arrive over the data channel (untrusted JSON).
// Properties: the JSON reader throws or reads a value; a value read writes out as JSON that
// reads back to the same value; an event reads from the same bytes every time.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let event = try? TextRoomEvent(parsing: input)
    precondition(event == (try? TextRoomEvent(parsing: input)), "an event reads differently from the same bytes")
    guard let json = try? ChatJSON(parsing: input) else {
        precondition(event == nil, "an event from bytes that are not JSON")
        return 0
    }
    let written = json.serialized
    guard let back = try? ChatJSON(parsing: Array(written.utf8)) else { preconditionFailure("written JSON does not read back") }
    precondition(back == json, "written JSON reads back differently")
    precondition(back.serialized == written, "written twice, differently")
    return 0
}
