// The playout policy of AudioJitterBuffer: where playout stands, and what to do next.

extension AudioJitterBuffer {
    /// Where playout stands at the next sample to produce: the quantities the policy reads.
    struct PlayoutPosition {
        /// Playout delay of the next sample above the drift line, ms.
        var aboveBaselineMs: Double
        /// `aboveBaselineMs` minus the target delay, ms (positive: more delay than wanted).
        var errorMs: Double
        /// The slot of the packet due (at the playout point's sequence number).
        var dueSlot: Int
        /// Whether the packet due is held.
        var dueHeld: Bool
        /// When the packet due is missing: the first held sequence number after it, if any.
        var nextHeld: Int64?
    }

    /// Measures the playout position (with the targets as last refreshed).
    ///
    /// Inlined, as ``decide(_:)``: called on a buffer being mutated, an outlined call takes
    /// a copy of the whole buffer.
    @inline(__always) func measure() -> PlayoutPosition {
        let playAtMs = frameStartMs + Double(pcmCount) * 1000 / Double(configuration.sampleRate)
        let nextMs = timeline.milliseconds(nextTS)
        let aboveBaseline = playAtMs - nextMs - targets.baseline(atMedia: nextMs)
        let slot = store.slot(of: nextSeq)
        let held = store.holds(nextSeq)
        return PlayoutPosition(aboveBaselineMs: aboveBaseline, errorMs: aboveBaseline - targets.targetMs,
                               dueSlot: slot, dueHeld: held, nextHeld: held ? nil : store.firstHeld(after: nextSeq))
    }

    /// What playout would do next if a sample were needed now: at the playout position after
    /// the samples already queued, on the last `get`'s clock. Refreshes the delay targets
    /// first (they are cached between packets); changes nothing else.
    mutating func decide() -> PlayoutOperation {
        targets.refresh()
        return decide(measure())
    }

    /// The playout policy: what to do at `p` (a pure function of `p`, the packets held, the
    /// playout point and the delay targets; see ``PlayoutOperation``).
    @inline(__always) func decide(_ p: PlayoutPosition) -> PlayoutOperation {
        let c = configuration
        if !playing {
            // Start once the first packet has waited the target delay.
            guard timeline.hasStream, store.count > 0, p.aboveBaselineMs >= targets.targetMs else { return .buffer }
        }
        let threshold = c.stretchThresholdMs
        if p.dueHeld {
            let silenceGap = store.media[p.dueSlot] > nextTS
            if p.errorMs > threshold { return silenceGap ? .silenceShortened : .accelerate }
            if p.errorMs < -threshold { return silenceGap ? .silenceLengthened : .preemptiveExpand }
            return silenceGap ? .silence : .normal
        }
        guard let q = p.nextHeld else {
            // Nothing held: wait while the missing packet may still come, then let media
            // time run on.
            return p.aboveBaselineMs >= targets.waitMs ? .expandAdvancing : .expandWaiting
        }
        // The packet due is missing but later ones are here: lost, or reordered.
        let qs = store.slot(of: q)
        if store.media[qs] <= nextTS { return .skipMissing }
        // Reordered rather than lost (its delay is still within the wait delay): wait for
        // it, concealing, instead of giving it up.
        if p.errorMs < -threshold || (c.waitForReordered && p.aboveBaselineMs < targets.waitMs) { return .expandWaiting }
        if q == nextSeq + 1 && store.media[qs] - nextTS <= store.duration[qs] { return .recoverFEC }
        return .expandLost
    }
}
