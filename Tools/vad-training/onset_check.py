#!/usr/bin/env python3
"""How the TalkDetector's onset rule works with a checkpoint's probabilities, on the held-out
validation mixtures of `train_spectral.py prepare` (WORK/shards/val_*.npz): for each onset mean,
the false talks a minute on the mixtures without speech and the share of speech turns (300 ms or
more after 500 ms without speech) that get no onset within 400 ms of their start.

    python3 Tools/vad-training/onset_check.py --work WORK CHECKPOINT.npz...

The rule is the TalkDetector's onset and hang-over on probabilities alone (6 of 8 frames at 0.5
or more and the window's mean over the onset mean; 450 ms hang-over at 0.35; 250 ms minimum
talk); its SNR conditions are left out, so the figures compare settings and checkpoints, not the
product's absolute rates. Used to choose `TalkDetectorConfiguration.onsetMeanProbability`.
"""
import argparse, os, sys
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_spectral as S   # noqa: E402
import train_model as M      # noqa: E402

MEANS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85)


def probabilities(model, V):
    """The checkpoint's probability per frame of every validation mixture (silent frames 0)."""
    net, mean, inv, lookahead = M.from_npz(model)
    net.eval()
    mean_t, inv_t = torch.tensor(mean), torch.tensor(inv)
    out = np.zeros(V["X"].shape[:2], np.float32)
    with torch.no_grad():
        for j in range(len(V["X"])):
            keep = np.flatnonzero(V["analysed"][j])
            if len(keep):
                fed = V["X"][j][keep].astype(np.float32)
                if lookahead:   # each frame's decision after `lookahead` more; the end repeated
                    fed = np.concatenate([fed, np.repeat(fed[-1:], lookahead, axis=0)])
                x = M.standardise(torch.from_numpy(fed[None].copy()), mean_t, inv_t)
                out[j, keep] = torch.sigmoid(M.delayed(net(x), lookahead))[0].numpy()
    return out


def onsets(p, onset_mean, on=0.5, frames=6, window=8, off=0.35, hangover=45, minimum=25):
    """Frame indices where a talk starts."""
    out, talking, last, start = [], False, 0, 0
    for i in range(window - 1, len(p)):
        if not talking:
            w = p[i - window + 1:i + 1]
            if (w >= on).sum() >= frames and w.mean() >= onset_mean:
                talking, start, last = True, i, i
                out.append(i)
        else:
            if p[i] >= off:
                last = i
            if i - last > hangover and i - start >= minimum:
                talking = False
    return out


def turns(label):
    """Start frames of speech runs of at least 300 ms that follow 500 ms without speech."""
    y = label > 0
    out, j = [], 50
    while j < len(y):
        if y[j] and not y[j - 50:j].any():
            e = j
            while e < len(y) and y[e]:
                e += 1
            if e - j >= 30:
                out.append(j)
            j = e
        j += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    V = S.load_shards(a.work, "val")
    has = V["has"]
    minutes = (~has).sum() * S.SECONDS / 60
    print("| checkpoint | onset mean | false talks/min (no speech) | turns without an onset in 400 ms | onset latency median |")
    print("|---|---|---|---|---|")
    for model in a.models:
        P = probabilities(model, V)
        for m in MEANS:
            false = sum(len(onsets(P[i], m)) for i in np.flatnonzero(~has))
            total, missed, latency = 0, 0, []
            for i in np.flatnonzero(has):
                ev = onsets(P[i], m)
                for t in turns(V["label"][i]):
                    total += 1
                    hit = [e for e in ev if t - 5 <= e <= t + 40]
                    if hit:
                        latency.append((hit[0] - t + 1) * 10)
                    else:
                        missed += 1
            print(f"| {model} | {m} | {false / minutes:.2f} | {missed / max(total, 1):.3f} ({missed} of {total}) "
                  f"| {np.median(latency):.0f} ms |", flush=True)


if __name__ == "__main__":
    main()
