import ParleyJitter

/// A PJSIP-Jbtest-style script driving an AudioJitterBuffer with 20 ms L16 packets at 16 kHz
/// (RTP clock 48 kHz) and 10 ms gets.
///
/// Tokens (whitespace optional, `(...)*n` and `X*n` repeat):
/// - `P` put the next packet now; `G` get one 10 ms frame (the clock advances 10 ms);
/// - `L` lose the next packet (never sent); `D` put the last packet again (duplicate);
/// - `H` hold the next packet (it is sent, arrives later); `F` deliver every held packet now;
/// - `J<ms>` the sender's timestamp jumps by ms; `X<ms>` the sender is silent (DTX) for ms:
///   timestamps advance, sequence numbers do not; `S` the sender restarts (new sequence
///   numbers and timestamps).
struct ScenarioScript {
    var buffer: AudioJitterBuffer
    var decoder: LinearPCMDecoder
    var clockMs = 0.0
    var nextSeq: UInt16
    var nextTs: UInt32
    var lastSent: (UInt16, UInt32, Int)?
    var held: [(UInt16, UInt32, Int)] = []
    var sent = 0
    var played: [Int] = []
    var playoutDelaysMs: [Double] = []
    var putTimes: [Int: Double] = [:]
    var outcomes: [JitterPutOutcome] = []
    /// Every playout step taken, in order.
    var operations: [PlayoutOperation] = []
    let payload: [UInt8]
    var output: [Int16]

    init(firstSequence: UInt16 = 1000, firstTimestamp: UInt32 = 123_456, configuration: JitterBufferConfiguration? = nil) throws {
        var c = configuration ?? JitterBufferConfiguration()
        c.sampleRate = 16_000
        c.clockRate = 48_000
        buffer = try AudioJitterBuffer(configuration: c)
        decoder = try LinearPCMDecoder(sampleRate: 16_000)
        nextSeq = firstSequence
        nextTs = firstTimestamp
        var p = [UInt8](repeating: 0, count: 640)
        for i in 0..<320 {
            let v = Int16(3000 * sin(Double(i) * 2 * Double.pi * 150 / 16_000))
            p[2 * i] = UInt8(truncatingIfNeeded: v); p[2 * i + 1] = UInt8(truncatingIfNeeded: v >> 8)
        }
        payload = p
        output = [Int16](repeating: 0, count: c.frameSamples)
    }

    mutating func send() -> (UInt16, UInt32, Int) {
        let packet = (nextSeq, nextTs, sent)
        sent += 1
        nextSeq &+= 1
        nextTs &+= 960
        return packet
    }

    mutating func deliver(_ p: (UInt16, UInt32, Int)) {
        putTimes[p.2] = clockMs
        outcomes.append(buffer.put(sequence: p.0, timestamp: p.1,
                                   arrival: MonotonicTime(nanoseconds: Int64(clockMs * 1e6)), payload: payload, tag: p.2))
    }

    mutating func get() {
        let now = MonotonicTime(nanoseconds: Int64(clockMs * 1e6))
        _ = output.withUnsafeMutableBufferPointer { buffer.getFrame(at: now, into: $0, decoder: &decoder) }
        operations += buffer.lastOperations
        for p in buffer.lastPlayedPackets {
            played.append(p.tag)
            if let t = putTimes[p.tag] { playoutDelaysMs.append(clockMs + Double(p.offsetInFrame) / 16 - t) }
        }
        clockMs += Double(buffer.configuration.frameMs)
    }

    mutating func run(_ script: String) {
        var chars = Array(script.filter { !$0.isWhitespace })
        var i = 0
        execute(&chars, &i, until: nil)
    }

    private mutating func number(_ c: [Character], _ i: inout Int) -> Int {
        var s = ""
        if i < c.count, c[i] == "-" || c[i] == "+" { s.append(c[i]); i += 1 }
        while i < c.count, c[i].isNumber { s.append(c[i]); i += 1 }
        return Int(s) ?? 0
    }

    private mutating func execute(_ c: inout [Character], _ i: inout Int, until close: Character?) {
        while i < c.count {
            let ch = c[i]
            if ch == close { i += 1; return }
            let start = i
            i += 1
            var body: (inout ScenarioScript) -> Void
            switch ch {
            case "(":
                let groupStart = i
                var depth = 1
                while i < c.count && depth > 0 {
                    if c[i] == "(" { depth += 1 }
                    if c[i] == ")" { depth -= 1 }
                    i += 1
                }
                let inner = String(c[groupStart..<(i - 1)])
                body = { $0.run(inner) }
            case "P": body = { s in let p = s.send(); s.lastSent = p; s.deliver(p) }
            case "G": body = { s in s.get() }
            case "L": body = { s in _ = s.send() }
            case "D": body = { s in if let p = s.lastSent { s.deliver(p) } }
            case "H": body = { s in s.held.append(s.send()) }
            case "F": body = { s in let h = s.held; s.held = []; for p in h { s.deliver(p) } }
            case "J": let ms = number(c, &i); body = { s in s.nextTs &+= UInt32(truncatingIfNeeded: ms * 48) }
            case "X": let ms = number(c, &i); body = { s in s.nextTs &+= UInt32(truncatingIfNeeded: ms * 48) }
            case "S": body = { s in s.nextSeq &+= 30_000; s.nextTs &+= 1_234_567_890 }
            default: fatalError("bad token \(ch) at \(start)")
            }
            var times = 1
            if i < c.count, c[i] == "*" { i += 1; times = number(c, &i) }
            for _ in 0..<times { body(&self) }
        }
    }

    /// Gets for `ms` more so everything buffered plays out.
    mutating func drain(ms: Int = 3000) {
        for _ in 0..<(ms / buffer.configuration.frameMs) { get() }
    }
}

import Foundation
