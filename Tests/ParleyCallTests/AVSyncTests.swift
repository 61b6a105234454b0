import Testing
import ParleyRTP
@testable import ParleyCall

/// A sender capturing audio (48 kHz RTP clock) and video (90 kHz) from one wall clock, with
/// random RTP bases, and a receiver whose audio plays `audioDelay` after capture and whose
/// video frames are complete `videoDelay` after capture.
private struct LipSyncScenario {
    var audioBase: UInt32
    var videoBase: UInt32
    var senderNTPOrigin: Double      // sender wall clock at capture time 0
    var audioDelay: Double           // network + jitter buffer, s
    var videoDelay: Double           // network + frame assembly + decode, s
    var receiverOrigin = 50.0        // receiver monotonic time at capture time 0 (unknown to it)

    func audioTimestamp(at t: Double) -> UInt32 { audioBase &+ UInt32(truncatingIfNeeded: Int64((t * 48_000).rounded())) }
    func videoTimestamp(at t: Double) -> UInt32 { videoBase &+ UInt32(truncatingIfNeeded: Int64((t * 90_000).rounded())) }
    func audioReport(at t: Double) -> RTCPSenderReport {
        RTCPSenderReport(ssrc: 1, ntpTimestamp: NTPTimestamp(secondsSince1900: senderNTPOrigin + t),
                         rtpTimestamp: audioTimestamp(at: t), packetCount: 0, octetCount: 0)
    }
    func videoReport(at t: Double) -> RTCPSenderReport {
        RTCPSenderReport(ssrc: 2, ntpTimestamp: NTPTimestamp(secondsSince1900: senderNTPOrigin + t),
                         rtpTimestamp: videoTimestamp(at: t), packetCount: 0, octetCount: 0)
    }
    func local(_ t: Double) -> MonotonicTime { MonotonicTime(seconds: receiverOrigin + t) }

    /// Runs 10 s; returns the skews of shown frames and the count dropped. With `declared`,
    /// no sender report is sent: the receiver is told each stream's RTP timestamp at capture
    /// time 0 instead.
    func run(declared: Bool = false) -> (skews: [Double], dropped: Int) {
        var sync = AVSynchronizer()
        if declared {
            var audio = try! RTPTimeMapping(clockRate: 48_000), video = try! RTPTimeMapping(clockRate: 90_000)
            audio.assume(rtpTimestamp: audioBase, atSenderSeconds: 0)
            video.assume(rtpTimestamp: videoBase, atSenderSeconds: 0)
            #expect(audio.reports == 0 && video.reports == 0)
            sync.useAudioMapping(audio)
            sync.useVideoMapping(video)
        } else {
            sync.audioSenderReport(audioReport(at: 0.3))
            sync.videoSenderReport(videoReport(at: 0.5))
        }
        var skews: [Double] = []
        var dropped = 0
        var audioT = 0.0
        for frame in 1..<300 {                       // 30 fps
            let capture = Double(frame) / 30
            let ready = capture + videoDelay
            // Audio keeps playing every 20 ms up to `ready`.
            while audioT + audioDelay <= ready {
                sync.audioPlayed(rtpTimestamp: audioTimestamp(at: audioT), at: local(audioT + audioDelay))
                audioT += 0.02
            }
            if frame % 60 == 0 && !declared {        // periodic reports, as RTCP sends them
                sync.audioSenderReport(audioReport(at: capture))
                sync.videoSenderReport(videoReport(at: capture))
            }
            switch sync.decide(videoTimestamp: videoTimestamp(at: capture), now: local(ready)) {
            case .show(let at):
                // Audio plays on while the frame waits: skew measured against the audio then.
                let audioHeard = at.seconds - receiverOrigin - audioDelay
                skews.append(audioHeard - capture)
                let s = sync.skew(videoTimestamp: videoTimestamp(at: capture), shownAt: at)!
                #expect(abs(s - (audioHeard - capture)) < 0.0011)
            case .drop: dropped += 1
            case .unsynchronized: break
            }
        }
        return (skews, dropped)
    }
}

@Test func videoWaitsForSlowerAudioWithinLipSyncWindow() {
    // Audio is buffered 180 ms, video ready after 60 ms: video must wait ~120 ms.
    let scenario = LipSyncScenario(audioBase: 0xFFFF_0000, videoBase: 12_345, senderNTPOrigin: 3_900_000_000,
                                   audioDelay: 0.180, videoDelay: 0.060)
    let (skews, dropped) = scenario.run()
    #expect(dropped == 0)
    #expect(skews.count > 250)
    for s in skews { #expect(LipSyncWindow.detectability.contains(s), "skew \(s)") }
    // Unsynchronised (shown on arrival) the picture would lead the sound by 120 ms: sound late.
    #expect(!LipSyncWindow.detectability.contains(0.060 - 0.180 - 0.01))
}

@Test func videoLaterThanAudioIsDroppedBeyondTheSoundLeadThreshold() {
    // Video ready 150 ms after audio played: showing it would put sound 150 ms ahead. Dropped.
    let late = LipSyncScenario(audioBase: 7, videoBase: 0xFFFF_FFF0, senderNTPOrigin: 3_800_000_000,
                               audioDelay: 0.050, videoDelay: 0.200)
    let (skews, dropped) = late.run()
    #expect(skews.isEmpty)
    #expect(dropped > 250)
    // 30 ms behind: shown at once, inside the +45 ms threshold.
    let slight = LipSyncScenario(audioBase: 7, videoBase: 99, senderNTPOrigin: 3_800_000_000,
                                 audioDelay: 0.050, videoDelay: 0.080)
    let r = slight.run()
    #expect(r.dropped == 0)
    for s in r.skews { #expect(s > 0.02 && LipSyncWindow.detectability.contains(s), "skew \(s)") }
}

@Test func badWindowsAndClockRatesAreTypedErrors() throws {
    #expect(throws: AVSyncError.invalidWindow(soundLead: 0, soundLag: 0.1)) { try LipSyncWindow(soundLead: 0, soundLag: 0.1) }
    #expect(throws: AVSyncError.self) { try LipSyncWindow(soundLead: 0.05, soundLag: -1) }
    #expect(throws: AVSyncError.self) { try LipSyncWindow(soundLead: .infinity, soundLag: 0.1) }
    #expect(try LipSyncWindow(soundLead: 0.045, soundLag: 0.125) == .detectability)
    #expect(throws: AVSyncError.invalidClockRate(0)) { try RTPTimeMapping(clockRate: 0) }
    #expect(throws: AVSyncError.invalidClockRate(-8_000)) { try AVSynchronizer(audioClockRate: -8_000, videoClockRate: 90_000) }
    #expect(try AVSynchronizer(audioClockRate: 16_000, videoClockRate: 90_000).audio.clockRate == 16_000)
}

@Test func lipSyncNeedsSenderReportsBeforeSynchronising() {
    var sync = AVSynchronizer()
    #expect(sync.decide(videoTimestamp: 0, now: .zero) == .unsynchronized)
    sync.audioPlayed(rtpTimestamp: 0, at: .zero)
    #expect(sync.presentationOffset == nil)
    #expect(LipSyncWindow.detectability.contains(0.045) && !LipSyncWindow.detectability.contains(0.046))
    #expect(LipSyncWindow.detectability.contains(-0.125) && !LipSyncWindow.detectability.contains(-0.126))
}

@Test func declaredTimestampOriginsSynchroniseWithoutSenderReports() {
    // A server in between forwards RTP but no RTCP; the sender counted both streams from 0 at
    // the start of its media. The same delays as with reports give the same waits.
    let scenario = LipSyncScenario(audioBase: 0, videoBase: 0, senderNTPOrigin: 3_900_000_000, audioDelay: 0.180, videoDelay: 0.060)
    let declared = scenario.run(declared: true)
    let reported = scenario.run()
    #expect(declared.dropped == 0 && declared.skews.count == reported.skews.count)
    for (a, b) in zip(declared.skews, reported.skews) { #expect(abs(a - b) < 0.0011) }
    for s in declared.skews { #expect(LipSyncWindow.detectability.contains(s), "skew \(s)") }
    // Told a wrong origin (the video's real one is 100 ms of 90 kHz ticks later), each picture
    // is shown 100 ms late against the sound: the origin is what puts the streams together.
    var shifted = scenario
    shifted.videoBase = 9_000
    let off = shifted.runTold(videoOrigin: 0)
    #expect(off.count > 250 && off.allSatisfy { abs($0 - 0.1) < 0.0011 }, "\(off.prefix(3))")
}

extension LipSyncScenario {
    /// Skews of shown frames when the receiver is told `videoOrigin` (and the true audio origin).
    fileprivate func runTold(videoOrigin: UInt32) -> [Double] {
        var sync = AVSynchronizer()
        var audio = try! RTPTimeMapping(clockRate: 48_000), video = try! RTPTimeMapping(clockRate: 90_000)
        audio.assume(rtpTimestamp: audioBase, atSenderSeconds: 0)
        video.assume(rtpTimestamp: videoOrigin, atSenderSeconds: 0)
        sync.useAudioMapping(audio)
        sync.useVideoMapping(video)
        var skews: [Double] = []
        var audioT = 0.0
        for frame in 1..<300 {
            let capture = Double(frame) / 30
            let ready = capture + videoDelay
            while audioT + audioDelay <= ready {
                sync.audioPlayed(rtpTimestamp: audioTimestamp(at: audioT), at: local(audioT + audioDelay))
                audioT += 0.02
            }
            if case .show(let at) = sync.decide(videoTimestamp: videoTimestamp(at: capture), now: local(ready)) {
                skews.append(at.seconds - receiverOrigin - audioDelay - capture)
            }
        }
        return skews
    }
}
