/// One step of an ``AudioJitterBuffer``'s playout: what it does next to produce audio, decided
/// from its state (the packet due, the packets held, the delay against its targets) before
/// it is carried out. A `get` takes as many steps as its frame needs; they are listed in
/// ``AudioJitterBuffer/lastOperations``.
///
/// The names follow WebRTC NetEq's where the step is the same. "The delay" is the playout
/// delay above the drift line; it is above the target when it exceeds it by more than
/// ``JitterBufferConfiguration/stretchThresholdMs``, below it likewise.
public enum PlayoutOperation: Sendable, Hashable, CaseIterable {
    /// Playout has not started: the first packet has not waited the target delay yet (or no
    /// packet is held). The frame is silence.
    case buffer
    /// Decode the packet due and play it as it is (the delay is near the target).
    case normal
    /// Decode the packet due and remove whole pitch periods from it (the delay is above the
    /// target). Noise-like audio without a clean period is played unchanged.
    case accelerate
    /// Decode the packet due and repeat whole pitch periods in it (the delay is below the
    /// target). Noise-like audio without a clean period is played unchanged.
    case preemptiveExpand
    /// The packet due is held but starts later than the playout point, the packets being in
    /// sequence (silence, DTX, or a timeline re-base): conceal (as silence) up to one frame of
    /// the gap and move the playout point as far.
    case silence
    /// As ``silence``, the delay being above the target: the playout point also skips the
    /// rest of the gap, up to the excess delay.
    case silenceShortened
    /// As ``silence``, the delay being below the target: the playout point moves on less than
    /// the concealed length, by up to the shortfall.
    case silenceLengthened
    /// The packet due is missing and may still come: conceal one frame and keep the playout
    /// point (wait for it). Chosen when later packets are held and the delay is below the
    /// target or within the wait delay (with ``JitterBufferConfiguration/waitForReordered``),
    /// and when nothing is held and the delay is within the wait delay.
    case expandWaiting
    /// Nothing is held and the packet due was waited for as long as allowed: conceal one
    /// frame and move the playout point one frame on.
    case expandAdvancing
    /// The packet due is given up and the next packet directly follows it: rebuild it from
    /// that packet's in-band FEC, or conceal it as ``expandLost`` when the decoder has none.
    case recoverFEC
    /// The packet due is given up: conceal its length (up to the next held packet, at most
    /// ``JitterBufferConfiguration/packetMs``) and move past it.
    case expandLost
    /// The packets up to the next held one are missing and that one does not start after the
    /// playout point: move the playout point to it, producing nothing.
    case skipMissing
}
