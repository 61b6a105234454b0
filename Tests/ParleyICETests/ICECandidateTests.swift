// SDP a=candidate: lines: written and read back, as browsers, Janus and libnice write them;
// malformed lines refused with the error that names the fault.

import ParleyICE
import Testing

@Suite struct ICECandidateTests {
    @Test(arguments: [
        // libnice (Parley's agent, Janus)
        "a=candidate:1 1 UDP 2013266431 192.168.1.20 47232 typ host",
        "a=candidate:2 1 UDP 1677721855 203.0.113.9 61211 typ srflx raddr 192.168.1.20 rport 47232",
        "a=candidate:8 1 TCP 1019216383 192.168.1.20 9 typ host tcptype active",
        // Chrome (trickled, extension attributes kept)
        "candidate:842163049 1 udp 1677729535 198.51.100.4 55271 typ srflx raddr 0.0.0.0 rport 0 generation 0 ufrag sK1u network-cost 999",
        "candidate:3098175849 1 udp 2122260223 fd00:1:2::3 58431 typ host generation 0 ufrag sK1u network-id 2",
        "candidate:1 1 udp 2122262783 4b1f2ee3-b4b6-4d72-9c2d-59d5a1e1a6d1.local 53412 typ host generation 0",
        // Firefox
        "candidate:0 1 UDP 2122252543 10.0.0.5 40000 typ host",
        "candidate:3 1 UDP 92217087 192.0.2.44 51000 typ relay raddr 192.0.2.44 rport 51000",
        "candidate:4 1 TCP 2105458943 10.0.0.5 9 typ host tcptype active",
        // Other address forms and limits
        "a=candidate:a+/Z 256 UDP 4294967295 ::1 65535 typ prflx",
        "a=candidate:f 1 UDP 0 ::ffff:192.0.2.1 0 typ host",
        "a=candidate:12345678901234567890123456789012 1 UDP 1 2001:db8::1:0:0:1 1 typ host",
    ])
    func writesAndReadsBack(line: String) throws {
        let c = try ICECandidate(parsing: line)
        let again = try ICECandidate(parsing: c.sdpLine)
        #expect(again == c)
        #expect(again.sdpLine == c.sdpLine)
        #expect(try ICECandidate(parsing: c.attribute) == c)
        #expect(try ICECandidate(parsing: c.sdpLine + "\r\n") == c)
    }

    @Test func readsEveryField() throws {
        let c = try ICECandidate(parsing: "a=candidate:2 1 udp 1677721855 203.0.113.9 61211 typ srflx raddr 192.168.1.20 rport 47232 generation 0\r\n")
        #expect(c.foundation == "2")
        #expect(c.component == 1)
        #expect(c.transport == .udp)
        #expect(c.priority == 1_677_721_855)
        #expect(c.address == "203.0.113.9")
        #expect(c.port == 61211)
        #expect(c.kind == .serverReflexive)
        #expect(c.related?.address == "192.168.1.20")
        #expect(c.related?.port == 47232)
        #expect(c.tcpType == nil)
        #expect(c.extensions == [try ICECandidate.Extension(name: "generation", value: "0")])
        #expect(c.sdpLine == "a=candidate:2 1 UDP 1677721855 203.0.113.9 61211 typ srflx raddr 192.168.1.20 rport 47232 generation 0")

        let tcp = try ICECandidate(parsing: "candidate:4 1 TCP 2105458943 10.0.0.5 9 typ host tcptype passive")
        #expect(tcp.transport == .tcp)
        #expect(tcp.tcpType == .passive)
    }

    @Test func buildsFromFields() throws {
        let c = try ICECandidate(foundation: "7", priority: 2_130_706_431, address: "127.0.0.1", port: 5000, kind: .host)
        #expect(c.sdpLine == "a=candidate:7 1 UDP 2130706431 127.0.0.1 5000 typ host")
        #expect(try ICECandidate(parsing: c.sdpLine) == c)
        #expect(throws: ICECandidateError.malformedFoundation("has space")) {
            try ICECandidate(foundation: "has space", priority: 1, address: "127.0.0.1", port: 1, kind: .host)
        }
        #expect(throws: ICECandidateError.malformedComponent("0")) {
            try ICECandidate(foundation: "1", component: 0, priority: 1, address: "127.0.0.1", port: 1, kind: .host)
        }
        #expect(throws: ICECandidateError.malformedAddress("300.1.1.1")) {
            try ICECandidate(foundation: "1", priority: 1, address: "300.1.1.1", port: 1, kind: .host)
        }
        #expect(throws: ICECandidateError.malformedAddress("bad addr")) {
            try ICECandidate(foundation: "1", priority: 1, address: "127.0.0.1", port: 1, kind: .serverReflexive,
                             related: ("bad addr", 9))
        }
        #expect(throws: ICECandidateError.tcpTypeMismatch) {
            try ICECandidate(foundation: "1", transport: .tcp, priority: 1, address: "127.0.0.1", port: 1, kind: .host)
        }
        #expect(throws: ICECandidateError.malformedExtension("typ")) {
            try ICECandidate.Extension(name: "typ", value: "host")
        }
        #expect(throws: ICECandidateError.malformedExtension("x")) {
            try ICECandidate.Extension(name: "x", value: "a b")
        }
    }

    @Test(arguments: [
        ("", ICECandidateError.notACandidate),
        ("a=candidat:1 1 UDP 1 10.0.0.1 1 typ host", .notACandidate),
        ("a=candidate:", .missingField("foundation")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1", .missingField("typ")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ", .missingField("typ")),
        ("a=candidate:1 1 UDP", .missingField("priority")),
        ("a=candidate:1  1 UDP 1 10.0.0.1 1 typ host", .malformedSpacing(position: 1)),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ host ", .malformedSpacing(position: 8)),
        ("a=candidate:1\t1 1 UDP 1 10.0.0.1 1 typ host", .malformedFoundation("1\t1")),
        ("a=candidate:1234567890123456789012345678901234 1 UDP 1 10.0.0.1 1 typ host",
         .malformedFoundation("1234567890123456789012345678901234")),
        ("a=candidate:f_1 1 UDP 1 10.0.0.1 1 typ host", .malformedFoundation("f_1")),
        ("a=candidate:1 0 UDP 1 10.0.0.1 1 typ host", .malformedComponent("0")),
        ("a=candidate:1 257 UDP 1 10.0.0.1 1 typ host", .malformedComponent("257")),
        ("a=candidate:1 x UDP 1 10.0.0.1 1 typ host", .malformedComponent("x")),
        ("a=candidate:1 1 SCTP 1 10.0.0.1 1 typ host", .unsupportedTransport("SCTP")),
        ("a=candidate:1 1 UDP 4294967296 10.0.0.1 1 typ host", .malformedPriority("4294967296")),
        ("a=candidate:1 1 UDP -1 10.0.0.1 1 typ host", .malformedPriority("-1")),
        ("a=candidate:1 1 UDP 1 10.0.0.256 1 typ host", .malformedAddress("10.0.0.256")),
        ("a=candidate:1 1 UDP 1 10.0.0 1 typ host", .malformedAddress("10.0.0")),
        ("a=candidate:1 1 UDP 1 1:2:3:4:5:6:7:8:9 1 typ host", .malformedAddress("1:2:3:4:5:6:7:8:9")),
        ("a=candidate:1 1 UDP 1 1::2::3 1 typ host", .malformedAddress("1::2::3")),
        ("a=candidate:1 1 UDP 1 fe80::1%eth0 1 typ host", .malformedAddress("fe80::1%eth0")),
        ("a=candidate:1 1 UDP 1 -host.local 1 typ host", .malformedAddress("-host.local")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 65536 typ host", .malformedPort("65536")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 type host", .missingField("typ")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ local", .unknownKind("local")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ srflx raddr", .malformedExtension("raddr")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ srflx raddr 10.0.0.2", .incompleteRelatedAddress),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ srflx raddr 10.0.0.2 generation 0", .incompleteRelatedAddress),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ srflx rport 5", .misplacedAttribute("rport")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ srflx raddr 10..0.2 rport 5", .malformedAddress("10..0.2")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ srflx raddr 10.0.0.2 rport 5 raddr 10.0.0.3 rport 6",
         .misplacedAttribute("raddr")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ host generation 0 raddr 10.0.0.2 rport 5", .misplacedAttribute("raddr")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ host typ host", .misplacedAttribute("typ")),
        ("a=candidate:1 1 TCP 1 10.0.0.1 9 typ host", .tcpTypeMismatch),
        ("a=candidate:1 1 UDP 1 10.0.0.1 9 typ host tcptype active", .tcpTypeMismatch),
        ("a=candidate:1 1 TCP 1 10.0.0.1 9 typ host tcptype both", .malformedTCPType("both")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ host generation", .malformedExtension("generation")),
        ("a=candidate:1 1 UDP 1 10.0.0.1 1 typ host ufrag é", .malformedExtension("ufrag")),
    ])
    func refusesMalformedLines(line: String, error: ICECandidateError) {
        #expect(throws: error) { try ICECandidate(parsing: line) }
    }
}
