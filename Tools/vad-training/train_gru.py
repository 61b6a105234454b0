#!/usr/bin/env python3
"""Trains a small causal GRU over the VAD's 31 features (one step per 10 ms frame) on the clips of
train.py, and compares it on the validation split with a model written by train.py/merge.py.

    python3 Tools/vad-training/train.py --corpus ../shared/data/corpus --work W --mixer 2 ...   # makes W/items.pkl
    python3 Tools/vad-training/train_gru.py train --work W --hidden 24 --save /tmp/g24.pt \
        [--baseline Sources/ParleyVoice/VADModelWeights.swift]
    python3 Tools/vad-training/train_gru.py predict --model /tmp/g24.pt --out probs.csv FILE.wav...
    python3 Tools/vad-training/train_gru.py swift --model /tmp/g24.pt --out Sources/ParleyVoice/VADRecurrentWeights.swift

Training: random windows of `--seq` frames (zero initial state, so the model also learns to start
from a reset) of the train split's clips, batches of `--batch`, Adam, the class-balanced,
group-weighted logistic loss of train.py (`frame_weights`). Validation runs every clip whole
(as the product does, from a reset); the epoch kept is the one with the best validation score
of train.py (mean F1 over held-out speech and synthetic mixtures minus mean share of held-out
music and noise frames flagged). torch (CPU) is needed only here: the product runs the exported
weights in Swift (VADRecurrent.swift).

Frames the product reports as digital silence (probability exactly 0 in `parley-vadtool
features`) are not fed to the GRU in `predict` (its state is held, the output is 0), as in Swift.
"""
import argparse, os, subprocess, sys, tempfile, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train as T   # noqa: E402
import merge        # noqa: E402

import torch        # noqa: E402
import torch.nn as nn   # noqa: E402


class GRUVAD(nn.Module):
    """standardised features (clamped to +-8) -> GRU(H) -> linear -> logit."""
    def __init__(self, nin, hidden):
        super().__init__()
        self.gru = nn.GRU(nin, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, h=None):
        y, h = self.gru(x, h)
        return self.out(y).squeeze(-1), h


def smooth(z, alpha):
    """train.smooth (the product's one-pole logit smoother), as a linear filter."""
    from scipy.signal import lfilter
    if alpha <= 0 or len(z) == 0: return z
    return lfilter([1 - alpha], [1, -alpha], z, zi=[alpha * z[0]])[0]


def standardise(X, mean, inv):
    return np.clip((X - mean) * inv, -8, 8).astype(np.float32)


def run_clips(model, Xs_list, batch=64):
    """Logits of whole clips (each from a zero state), batched by similar length."""
    order = sorted(range(len(Xs_list)), key=lambda k: len(Xs_list[k]))
    out = [None] * len(Xs_list)
    with torch.no_grad():
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            L = max(len(Xs_list[k]) for k in idx)
            xb = np.zeros((len(idx), L, T.NFEAT), dtype=np.float32)
            for r, k in enumerate(idx): xb[r, :len(Xs_list[k])] = Xs_list[k]
            z, _ = model(torch.from_numpy(xb))
            z = z.numpy()
            for r, k in enumerate(idx): out[k] = z[r, :len(Xs_list[k])].astype(np.float64)
    return out


def summary(items, alpha_logits, alphas=(0.0, 0.3, 0.5, 0.7)):
    """Chooses the output smoothing like train.py; returns (score, alpha, table, PR-AUC) and
    leaves each item's "p" at the chosen smoothing."""
    best = None
    for alpha in alphas:
        for i in items: i["p"] = 1 / (1 + np.exp(-smooth(alpha_logits[id(i)], alpha)))
        ev = T.tabulate(items)
        vs = [v["F1"] for k, v in ev.items() if k[0] == "val" and (k[1] == "speech" or k[1].startswith("synmix"))]
        vf = [v["flagged"] for k, v in ev.items() if k[0] == "val" and k[1] in ("music", "noise")]
        score = float(np.mean(vs)) - float(np.mean(vf))
        if best is None or score > best[0]: best = (score, alpha, ev)
    score, alpha, ev = best
    for i in items: i["p"] = 1 / (1 + np.exp(-smooth(alpha_logits[id(i)], alpha)))
    vals = [i for i in items if i["split"] == "val" and i["group"] in ("speech", "synmix")]
    pv = np.concatenate([i["p"] for i in vals]); yv = np.concatenate([i["y"] for i in vals])
    ap, _ = T.pr_auc(pv, yv)
    tp = np.sum((pv >= 0.5) & (yv > 0.5)); f1 = 2 * tp / (np.sum(pv >= 0.5) + np.sum(yv > 0.5))
    return dict(score=score, alpha=alpha, ev=ev, prauc=ap, f1=float(f1), P=float(tp / max(np.sum(pv >= 0.5), 1)),
                R=float(tp / max(np.sum(yv > 0.5), 1)),
                music=ev[("val", "music")]["flagged"], noise=ev[("val", "noise")]["flagged"])


def report(tag, s, full=False):
    print(f"{tag}: val speech+synmix F1 {s['f1']:.3f} PR-AUC {s['prauc']:.3f}, val music flagged {s['music']:.3f}, "
          f"noise flagged {s['noise']:.3f} (score {s['score']:.3f}, smoothing {s['alpha']})", flush=True)
    if full:
        for k, v in s["ev"].items():
            fl = f"flagged {v['flagged']:.3f}" if v["flagged"] is not None else f"P {v['P']:.3f} R {v['R']:.3f} F1 {v['F1']:.3f}"
            print(f"  {k[0]:6s} {k[1]:10s} frames {v['n']:7d}  {fl}")


def cmd_train(a):
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    rng = np.random.default_rng(a.seed)
    la = argparse.Namespace(reuse=True, work=a.work)
    items = T.load_items(la) if a.items is None else __import__("pickle").load(open(a.items, "rb"))
    for i in items: i["y"] = T.fill_gaps(i["y"], a.gap)
    evalset = [i for i in items if i["split"] in ("val", "report")]
    fit = T.fit_items(items, a.final)
    W = T.frame_weights(fit, a.weights)
    X = np.concatenate([i["X"] for i in fit])
    mean = X.mean(0); inv = 1 / (X.std(0) + 1e-3)
    if a.baseline:
        B = merge.load(a.baseline)
        logits = {id(i): merge.logit(B, i["X"], B["mean"], B["invStd"]) for i in evalset}
        report(f"baseline {os.path.basename(a.baseline)}", summary(evalset, logits, (B["alpha"],)), full=True)
    Xs = [standardise(i["X"], mean, inv) for i in fit]
    Ys = [i["y"].astype(np.float32) for i in fit]
    lens = np.array([len(x) for x in Xs])
    Ev = [standardise(i["X"], mean, inv) for i in evalset]
    model = GRUVAD(T.NFEAT, a.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=0)
    total = lens.sum()
    nchunks = int(total / a.seq * a.coverage)
    print(f"training GRU({a.hidden}) on {len(fit)} clips, {total} frames; {nchunks} windows of {a.seq} frames per epoch", flush=True)
    best = None
    p_clip = lens / lens.sum()
    for ep in range(a.epochs):
        t0 = time.time()
        lr = a.lr * (0.5 ** (ep // a.halve)) if a.halve else a.lr
        for g in opt.param_groups: g["lr"] = lr
        clips = rng.choice(len(fit), size=nchunks, p=p_clip)
        tot = 0.0
        model.train()
        for s in range(0, nchunks, a.batch):
            cb = clips[s:s + a.batch]
            xb = np.zeros((len(cb), a.seq, T.NFEAT), dtype=np.float32)
            yb = np.zeros((len(cb), a.seq), dtype=np.float32); wb = np.zeros_like(yb)
            for r, k in enumerate(cb):
                n = lens[k]
                st = 0 if n <= a.seq or rng.random() < a.from_start else int(rng.integers(0, n - a.seq + 1))
                m = min(a.seq, n - st)
                xb[r, :m] = Xs[k][st:st + m]; yb[r, :m] = Ys[k][st:st + m]; wb[r, :m] = W[k][st:st + m]
                if a.burn and st > 0:   # the first frames after a mid-clip start: no loss (state warming up)
                    wb[r, :min(a.burn, m)] = 0
            xt = torch.from_numpy(xb)
            if a.input_noise: xt = xt + a.input_noise * torch.randn_like(xt)   # standardised units
            z, _ = model(xt)
            wt = torch.from_numpy(wb)
            loss = (wt * nn.functional.binary_cross_entropy_with_logits(z, torch.from_numpy(yb), reduction="none")).sum() / wt.sum().clamp_min(1e-6)
            l2 = sum((p ** 2).sum() for n_, p in model.named_parameters() if "weight" in n_)
            opt.zero_grad()
            (loss + a.l2 * l2).backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            tot += float(loss.detach()) * len(cb)
        model.eval()
        zs = run_clips(model, Ev)
        s_ = summary(evalset, {id(i): z for i, z in zip(evalset, zs)})
        report(f"epoch {ep + 1} loss {tot / nchunks:.4f} lr {lr:.1e} ({time.time() - t0:.0f} s)", s_)
        if best is None or s_["score"] > best[0]:
            best = (s_["score"], ep + 1, {k: v.clone() for k, v in model.state_dict().items()}, s_["alpha"])
        if a.swa and ep >= a.epochs - a.swa:   # running mean of the last epochs' weights
            cur = model.state_dict(); n_ = ep - (a.epochs - a.swa) + 1
            swa = {k: v.clone() for k, v in cur.items()} if n_ == 1 else {k: swa[k] + (cur[k] - swa[k]) / n_ for k in cur}
    if a.swa:
        model.load_state_dict(swa)
        s_ = summary(evalset, {id(i): z for i, z in zip(evalset, run_clips(model, Ev))})
        report(f"mean of the weights of the last {a.swa} epochs", s_)
        if s_["score"] > best[0]:
            best = (s_["score"], f"mean of the last {a.swa}", swa, s_["alpha"])
    score, ep, state, alpha = best
    model.load_state_dict(state)
    zs = run_clips(model, Ev)
    s_ = summary(evalset, {id(i): z for i, z in zip(evalset, zs)}, (alpha,))
    report(f"kept epoch {ep}", s_, full=True)
    worst = sorted(((float(np.mean(i['p'] >= 0.5)), i['name']) for i in evalset if i['group'] in ('music', 'noise', 'singing', 'human')), reverse=True)[:10]
    print("most flagged non-speech clips:", ", ".join(f"{n} {f:.2f}" for f, n in worst))
    note = (f"train_gru.py: {'train+val' if a.final else 'train'} split, labels' gaps <= {a.gap} frames filled, GRU({a.hidden}), "
            f"windows of {a.seq} frames, weights {a.weights}, epoch {ep} of {a.epochs}, output smoothing {alpha}")
    torch.save(dict(state=state, mean=mean, inv=inv, alpha=alpha, hidden=a.hidden, gap=a.gap, note=note), a.save)
    print("saved", a.save)


def load_model(path):
    d = torch.load(path, weights_only=False)
    m = GRUVAD(T.NFEAT, d["hidden"]); m.load_state_dict(d["state"]); m.eval()
    return m, d


def gru_probs(model, d, F):
    """Probabilities for one file's dumped features F (rows: product probability, 31 features):
    digital-silence frames (product probability 0) give 0 and leave the GRU's state as it was;
    the output smoother restarts after them, as in Swift."""
    live = F[:, 0] != 0
    Xs = standardise(F[live, 1:], d["mean"], d["inv"])
    with torch.no_grad():
        z, _ = model(torch.from_numpy(Xs[None]))
    z = z.numpy()[0].astype(np.float64)
    share = d.get("share", 1.0)
    if share < 1:
        B = merge.load(d["mlp"])
        z = share * z + (1 - share) * merge.logit(B, F[live, 1:], B["mean"], B["invStd"])
    # The smoother restarts after digital silence (the GRU's state does not).
    idx = np.flatnonzero(live)
    runs = np.split(np.arange(len(idx)), np.flatnonzero(np.diff(idx) > 1) + 1)
    z = np.concatenate([smooth(z[r], d["alpha"]) for r in runs if len(r)]) if len(idx) else z
    p = np.zeros(len(F)); p[live] = 1 / (1 + np.exp(-z))
    return p


def cmd_predict(a):
    torch.set_num_threads(1)
    model, d = load_model(a.model)
    with tempfile.TemporaryDirectory() as tmp, open(a.out, "w") as out:
        if a.features:   # features dumped before (they do not depend on the model)
            tmp = a.features
            todo = [f for f in a.files if not os.path.exists(f"{tmp}/{os.path.splitext(os.path.basename(f))[0]}.f32")]
            os.makedirs(tmp, exist_ok=True)
        else:
            todo = a.files
        if todo: subprocess.run([a.tool, "features", tmp] + todo, check=True)
        out.write("file,time_s,prob\n")
        for f in a.files:
            stem = os.path.splitext(os.path.basename(f))[0]
            F = np.fromfile(f"{tmp}/{stem}.f32", dtype=np.float32).reshape(-1, T.NFEAT + 1)
            p = gru_probs(model, d, F)
            out.write("".join(f"{stem},{k * 0.01:.2f},{v:.5f}\n" for k, v in enumerate(p)))
    print("wrote", a.out)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--work", required=True, help="train.py's work directory (its items.pkl)")
    t.add_argument("--items", help="another items pickle of train.py")
    t.add_argument("--gap", type=int, default=0)
    t.add_argument("--hidden", type=int, default=24)
    t.add_argument("--seq", type=int, default=500, help="training window, frames")
    t.add_argument("--batch", type=int, default=32)
    t.add_argument("--coverage", type=float, default=1.0, help="windows per epoch x window / training frames")
    t.add_argument("--from-start", type=float, default=0.3, help="share of windows starting at their clip's start")
    t.add_argument("--burn", type=int, default=0, help="frames without loss after a mid-clip window start")
    t.add_argument("--epochs", type=int, default=12)
    t.add_argument("--halve", type=int, default=5, help="halve the learning rate every N epochs (0: never)")
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--l2", type=float, default=1e-5)
    t.add_argument("--weights", default="1,0.5,0.8,1.5,1.2", help="loss share of speech, corpus mixtures, synthetic mixtures, music, noise")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--input-noise", type=float, default=0.0, help="Gaussian noise on the standardised inputs while training")
    t.add_argument("--swa", type=int, default=0, help="also try the mean of the weights of the last N epochs")
    t.add_argument("--final", action="store_true")
    t.add_argument("--baseline", help="a VADModelWeights.swift to evaluate the same way first")
    t.add_argument("--save", required=True)
    p = sub.add_parser("predict")
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--tool", default=f"{T.ROOT}/.build/release/parley-vadtool")
    p.add_argument("--features", help="a folder of features dumped by parley-vadtool (made if missing)")
    p.add_argument("files", nargs="+")
    b = sub.add_parser("blend")
    b.add_argument("--model", required=True, nargs="+")
    b.add_argument("--work", required=True)
    b.add_argument("--mlp", default=f"{T.ROOT}/Sources/ParleyVoice/VADModelWeights.swift")
    b.add_argument("--shares", default="0.25,0.5,0.75,1")
    b.add_argument("--share", type=float, help="save this share instead of the best one")
    b.add_argument("--save", required=True)
    v = sub.add_parser("val")
    v.add_argument("--work", required=True)
    v.add_argument("models", nargs="+")
    s = sub.add_parser("swift")
    s.add_argument("--model", required=True)
    s.add_argument("--out", required=True)
    a = ap.parse_args()
    {"train": cmd_train, "predict": cmd_predict, "blend": cmd_blend, "val": cmd_val, "swift": cmd_swift}[a.cmd](a)


def merge_grus(paths):
    """One GRU whose logit is the mean of the logits of several (same standardisation): units
    side by side, recurrent weights block-diagonal per gate (exact)."""
    parts = [load_model(p)[1] for p in paths]
    for q in parts[1:]:
        assert np.allclose(q["mean"], parts[0]["mean"]) and np.allclose(q["inv"], parts[0]["inv"]), "different standardisation"
    hs = [q["hidden"] for q in parts]; H = sum(hs); k = len(parts)
    st = [{n: v.numpy() for n, v in q["state"].items()} for q in parts]
    wi = np.zeros((3 * H, T.NFEAT), np.float32); wh = np.zeros((3 * H, H), np.float32)
    bi = np.zeros(3 * H, np.float32); bh = np.zeros(3 * H, np.float32)
    wo = np.zeros((1, H), np.float32); bo = np.zeros(1, np.float32)
    o = 0
    for q, h in zip(st, hs):
        for g in range(3):
            wi[g * H + o:g * H + o + h] = q["gru.weight_ih_l0"][g * h:(g + 1) * h]
            wh[g * H + o:g * H + o + h, o:o + h] = q["gru.weight_hh_l0"][g * h:(g + 1) * h]
            bi[g * H + o:g * H + o + h] = q["gru.bias_ih_l0"][g * h:(g + 1) * h]
            bh[g * H + o:g * H + o + h] = q["gru.bias_hh_l0"][g * h:(g + 1) * h]
        wo[0, o:o + h] = q["out.weight"][0] / k; bo += q["out.bias"] / k
        o += h
    state = {"gru.weight_ih_l0": wi, "gru.weight_hh_l0": wh, "gru.bias_ih_l0": bi, "gru.bias_hh_l0": bh,
             "out.weight": wo, "out.bias": bo}
    d = dict(parts[0], hidden=H, state={n: torch.from_numpy(v) for n, v in state.items()},
             note="mean of " + "; ".join(f"[{q['note']}]" for q in parts))
    m = GRUVAD(T.NFEAT, H); m.load_state_dict(d["state"]); m.eval()
    return m, d


def cmd_blend(a):
    """Validation figures of share * GRU logit + (1 - share) * MLP logit (the MLP a
    VADModelWeights.swift) for several shares; saves the model with the chosen share. Several
    --model: their mean, merged into one GRU (merge_grus)."""
    torch.set_num_threads(1)
    model, d = merge_grus(a.model) if len(a.model) > 1 else load_model(a.model[0])
    items = T.load_items(argparse.Namespace(reuse=True, work=a.work))
    for i in items: i["y"] = T.fill_gaps(i["y"], d.get("gap", 0))
    evalset = [i for i in items if i["split"] in ("val", "report")]
    B = merge.load(a.mlp)
    zm = [merge.logit(B, i["X"], B["mean"], B["invStd"]) for i in evalset]
    zg = run_clips(model, [standardise(i["X"], d["mean"], d["inv"]) for i in evalset])
    best = None
    for share in (float(v) for v in a.shares.split(",")):
        s_ = summary(evalset, {id(i): share * g + (1 - share) * m for i, g, m in zip(evalset, zg, zm)})
        report(f"share {share}", s_)
        if best is None or s_["score"] > best[0]: best = (s_["score"], share, s_["alpha"])
    _, share, alpha = best
    if a.share is not None:
        share = a.share
        alpha = summary(evalset, {id(i): share * g + (1 - share) * m for i, g, m in zip(evalset, zg, zm)})["alpha"]
    d = dict(d, share=share, alpha=alpha, mlp=os.path.abspath(a.mlp),
             note=d["note"] + f"; blended with the MLP ({share:g} GRU), output smoothing {alpha}")
    torch.save(d, a.save)
    print(f"chosen share {share}, smoothing {alpha}; saved {a.save}")


def cmd_val(a):
    """One Markdown row of validation figures per saved model (its share and smoothing)."""
    torch.set_num_threads(1)
    items = T.load_items(argparse.Namespace(reuse=True, work=a.work))
    for i in items: i["y"] = T.fill_gaps(i["y"], 0)
    evalset = [i for i in items if i["split"] in ("val", "report")]
    for path in a.models:
        model, d = load_model(path)
        z = run_clips(model, [standardise(i["X"], d["mean"], d["inv"]) for i in evalset])
        share = d.get("share", 1.0)
        if share < 1:
            B = merge.load(d["mlp"])
            z = [share * g + (1 - share) * merge.logit(B, i["X"], B["mean"], B["invStd"]) for g, i in zip(z, evalset)]
        s_ = summary(evalset, {id(i): g for i, g in zip(evalset, z)}, (d["alpha"],))
        print(f"| {os.path.basename(path)} | {s_['P']:.3f} / {s_['R']:.3f} / {s_['f1']:.3f} / {s_['prauc']:.3f} | "
              f"{s_['music']:.3f} / {s_['noise']:.3f} |", flush=True)


def cmd_swift(a):
    """Writes VADRecurrentWeights.swift (torch's layout: rows r, z, n of weight_ih/weight_hh)."""
    _, d = load_model(a.model)
    st = {k: v.numpy().astype(np.float64) for k, v in d["state"].items()}
    def arr(x):
        x = np.asarray(x, dtype=np.float64).ravel()
        rows = [", ".join(f"{v:.9g}" for v in x[i:i + 8]) for i in range(0, len(x), 8)]
        return "[\n        " + ",\n        ".join(rows) + ",\n    ]"
    with open(a.out, "w") as f:
        f.write(f"""// GENERATED by Tools/vad-training/train_gru.py: do not edit by hand.
// {d['note']}

enum VADRecurrentWeights {{
    static let inputCount = {T.NFEAT}
    static let hidden = {d['hidden']}
    /// The GRU logit's weight in the decision; the MLP's (VADModelWeights) is 1 - share.
    static let share: Float = {d.get('share', 1.0)}
    /// The one-pole smoother of the decision's logit (replaces VADModelWeights.outputSmoothing).
    static let outputSmoothing: Float = {d['alpha']}
    static let mean: [Float] = {arr(d['mean'])}
    static let invStd: [Float] = {arr(d['inv'])}
    static let wi: [Float] = {arr(st['gru.weight_ih_l0'])}
    static let bi: [Float] = {arr(st['gru.bias_ih_l0'])}
    static let wh: [Float] = {arr(st['gru.weight_hh_l0'])}
    static let bh: [Float] = {arr(st['gru.bias_hh_l0'])}
    static let wo: [Float] = {arr(st['out.weight'])}
    static let bo: Float = {float(st['out.bias'][0]):.9g}
}}
""")
    print("wrote", a.out)


if __name__ == "__main__":
    main()
