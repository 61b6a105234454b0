import Foundation
import Testing
import ParleyCall
import ParleyCore
import ParleyDTLS
import ParleyDevices
import ParleyRTP
import ParleySDP
import ParleyWebRTC

let clock = SystemMediaClock()

/// Two transports on 127.0.0.1, introduced to each other by a real offer and answer (written as
/// text and read back, as signalling would carry them), with a data-channel section when
/// `dataChannel`.
struct Pair {
    let offerer: WebRTCTransport
    let answerer: WebRTCTransport

    /// `tamperOfferFingerprint` gives the answerer a fingerprint other than the offerer's.
    /// `answerDataChannel` (else `dataChannel`) says whether the answer accepts the section.
    init(tamperOfferFingerprint: Bool = false, dataChannel: Bool = false, answerDataChannel: Bool? = nil) throws {
        let answerDataChannel = answerDataChannel ?? dataChannel
        offerer = try WebRTCTransport(role: .offerer, certificate: DTLSCertificate(), localAddresses: ["127.0.0.1"], clock: clock)
        answerer = try WebRTCTransport(role: .answerer, certificate: DTLSCertificate(), localAddresses: ["127.0.0.1"], clock: clock)
        let deadline = Date().addingTimeInterval(5)
        while !(offerer.candidatesComplete && answerer.candidatesComplete), Date() < deadline { usleep(5_000) }
        #expect(offerer.candidatesComplete && answerer.candidatesComplete)
        let offerText = JSEPDescription.offer(local: offerer.local(cname: "o", audioSSRC: 0x1111, videoSSRC: 0x1112),
                                              audio: .both, video: nil, dataChannel: dataChannel).text
        var offer = try JSEPDescription(parsing: offerText, kind: .offer)
        #expect(offer.fingerprint(of: offer.media[0]) == offerer.localFingerprint)
        if tamperOfferFingerprint {
            let other = try SDPFingerprint.sha256((0..<32).map { UInt8($0) })
            offer.fingerprint = other
            for i in offer.media.indices where offer.media[i].fingerprint != nil { offer.media[i].fingerprint = other }
        }
        let answerText = try JSEPDescription.answer(to: offer, local: answerer.local(cname: "a", audioSSRC: 0x2222, videoSSRC: 0x2223),
                                                 dataChannel: answerDataChannel) { _ in .both }.text
        let answer = try JSEPDescription(parsing: answerText, kind: .answer)
        try answerer.setRemote(offer, dataChannel: answerDataChannel)
        try offerer.setRemote(answer, dataChannel: dataChannel)
        #expect(answerer.dtlsRole == .client && offerer.dtlsRole == .server)
    }

    /// Receives on both until `done` or `seconds` pass; what arrived, per side.
    @discardableResult
    func pump(seconds: Double, until done: () -> Bool) -> (offerer: [[UInt8]], answerer: [[UInt8]]) {
        var got: (offerer: [[UInt8]], answerer: [[UInt8]]) = ([], [])
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let now = clock.now()
            offerer.receive(until: now) { bytes, arrival in
                #expect(arrival <= clock.now())
                got.offerer.append(Array(bytes))
            }
            answerer.receive(until: now) { bytes, _ in got.answerer.append(Array(bytes)) }
            if done() { break }
            usleep(2_000)
        }
        return got
    }

    func connect() {
        pump(seconds: 5) { offerer.state == .connected && answerer.state == .connected }
        #expect(offerer.state == .connected, "\(offerer.state)")
        #expect(answerer.state == .connected, "\(answerer.state)")
    }
}

func rtp(_ seq: UInt16, ssrc: UInt32) throws -> [UInt8] {
    try RTPHeader(payloadType: 111, sequenceNumber: seq, timestamp: UInt32(seq) * 960, ssrc: ssrc)
        .marshalled(payload: (0..<160).map { UInt8(truncatingIfNeeded: Int($0) &+ Int(seq)) })
}

@Suite(.serialized) struct WebRTCTransportTests {
    @Test func rtpAndRTCPArriveDecryptedBothWays() throws {
        let pair = try Pair()
        let early = try rtp(0, ssrc: 1)
        #expect(!early.withUnsafeBytes { pair.offerer.send($0, at: clock.now()) })
        #expect(pair.offerer.statistics.sendsDroppedUnkeyed == 1)
        pair.connect()
        #expect(pair.offerer.selectedPair != nil)
        let fromOfferer = try (1...20).map { try rtp($0, ssrc: 0x1111) }
        let fromAnswerer = try (1...20).map { try rtp($0, ssrc: 0x2222) }
        let report = try RTCPCompound.marshalled([.receiverReport(RTCPReceiverReport(ssrc: 0x1111))])
        for p in fromOfferer + [report] { #expect(p.withUnsafeBytes { pair.offerer.send($0, at: clock.now()) }) }
        for p in fromAnswerer { #expect(p.withUnsafeBytes { pair.answerer.send($0, at: clock.now()) }) }
        let got = pair.pump(seconds: 3) {
            pair.answerer.statistics.srtp.unprotected >= 21 && pair.offerer.statistics.srtp.unprotected >= 20
        }
        #expect(got.answerer == fromOfferer + [report])
        #expect(got.offerer == fromAnswerer)
        #expect(pair.answerer.statistics.srtp.dropped == 0 && pair.offerer.statistics.srtp.dropped == 0)
        #expect(pair.offerer.statistics.srtp.protected == 21)
        pair.offerer.close()
        #expect(pair.offerer.state == .closed)
        #expect(!early.withUnsafeBytes { pair.offerer.send($0, at: clock.now()) })
    }

    @Test func aWrongFingerprintFailsBeforeAnyKey() throws {
        let pair = try Pair(tamperOfferFingerprint: true)
        pair.pump(seconds: 5) { if case .failed = pair.answerer.state { true } else { false } }
        guard case .failed(.dtls(.fingerprintMismatch(let expected, let actual))) = pair.answerer.state else {
            Issue.record("answerer: \(pair.answerer.state)")
            return
        }
        #expect(actual == pair.offerer.localFingerprint && expected != actual)
        #expect(pair.offerer.state != .connected)
        for seq in UInt16(1)...10 {
            let p = try rtp(seq, ssrc: 7)
            #expect(!p.withUnsafeBytes { pair.offerer.send($0, at: clock.now()) })
            #expect(!p.withUnsafeBytes { pair.answerer.send($0, at: clock.now()) })
        }
        let got = pair.pump(seconds: 0.3) { false }
        #expect(got.offerer.isEmpty && got.answerer.isEmpty)
        #expect(pair.offerer.statistics.srtp.unprotected == 0 && pair.answerer.statistics.srtp.unprotected == 0)
        #expect(pair.offerer.statistics.srtp.protected == 0 && pair.answerer.statistics.srtp.protected == 0)
        #expect(pair.answerer.statistics.sendsDroppedUnkeyed == 10)
    }

    @Test func descriptionsOfTheWrongKindAreRefused() throws {
        let t = try WebRTCTransport(role: .offerer, certificate: DTLSCertificate(), localAddresses: ["127.0.0.1"], clock: clock)
        let offer = JSEPDescription.offer(local: t.local(cname: "o", audioSSRC: 1, videoSSRC: 2), audio: .both, video: nil)
        #expect(throws: WebRTCTransportError.unexpectedDescription(.offer)) { try t.setRemote(offer) }
        #expect(throws: WebRTCTransportError.invalidQueueCapacity(0)) {
            _ = try WebRTCTransport(role: .offerer, certificate: DTLSCertificate(), clock: clock, queueCapacity: 0)
        }
        #expect(throws: WebRTCTransportError.self) { try t.addRemoteCandidate("candidate:garbage") }
    }

    @Test func twoCallSessionsHearEachOtherOverWebRTC() throws {
        let pair = try Pair()
        pair.connect()
        let format = try AudioFormat(sampleRate: 16_000, channels: 1)
        let start = clock.now()
        let left = CallSession(configuration: CallSessionConfiguration(), clock: clock, start: start)
        let right = CallSession(configuration: CallSessionConfiguration(), clock: clock, start: start)
        let tl = left.addTransport(pair.offerer)
        let tr = right.addTransport(pair.answerer)
        var send = AudioSendConfiguration()
        send.ssrc = 0x1111
        try left.addLocal(id: "left", source: ToneSource<Int16>(format: format, frequency: 440), configuration: send, sendingOn: tl)
        send.ssrc = 0x2222
        try right.addLocal(id: "right", source: ToneSource<Int16>(format: format, frequency: 660), configuration: send, sendingOn: tr)
        var heardByLeft = 0, heardByRight = 0
        left.onAudio = { _, pcm in heardByLeft += pcm.count }
        right.onAudio = { _, pcm in heardByRight += pcm.count }
        let scheduler = MediaScheduler(clock: clock)
        try left.attach(to: scheduler)
        try right.attach(to: scheduler)
        scheduler.runUntil(start.advanced(bySeconds: 2))
        for (session, peer) in [(left, CallSession.defaultName(ofSSRC: 0x2222)), (right, CallSession.defaultName(ofSSRC: 0x1111))] {
            let stats = try #require(session.receiveStatistics(of: peer), "no remote \(peer)")
            #expect(stats.receive.packetsBuffered > 50, "\(stats.receive)")
            #expect(stats.receive.malformed == 0)
        }
        #expect(heardByLeft > 16_000 / 2 && heardByRight > 16_000 / 2)
        #expect(pair.offerer.statistics.srtp.dropped == 0 && pair.answerer.statistics.srtp.dropped == 0)
        #expect(pair.offerer.statistics.sendsDroppedUnkeyed == 0)
    }
}
