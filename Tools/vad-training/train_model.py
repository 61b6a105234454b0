"""The VAD network in torch (the same layers and equations as SpectralNetwork.swift), its
training loop with checkpoints, and conversion to and from the .npz that export_weights.py reads.
Used by train_spectral.py; torch (CPU) is needed only here."""
import glob, os, time
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import train_spectral as S


class Net(nn.Module):
    """standardised inputs (clamped to +-8) -> conv1d(k) -> ReLU -> conv1d(k) -> ReLU -> GRU -> linear.
    The convolutions are causal: k - 1 frames of zeros on the left, none on the right."""
    def __init__(self, nin, conv, hidden, kernel=3):
        super().__init__()
        self.kernel = kernel
        self.conv1 = nn.Conv1d(nin, conv, kernel)
        self.conv2 = nn.Conv1d(conv, conv, kernel)
        self.gru = nn.GRU(conv, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):                       # x: (batch, frames, nin), standardised
        y = x.transpose(1, 2)
        y = F.relu(self.conv1(F.pad(y, (self.kernel - 1, 0))))
        y = F.relu(self.conv2(F.pad(y, (self.kernel - 1, 0))))
        y, _ = self.gru(y.transpose(1, 2))
        return self.out(y).squeeze(-1)


def standardise(X, mean, inv):
    return torch.clamp((X - mean) * inv, -8, 8)


def to_npz(path, net, mean, inv, note, lookahead=0):
    sd = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in net.state_dict().items()}
    sd["out.weight"] = sd["out.weight"].reshape(-1)
    extra = dict(lookahead=np.int32(lookahead)) if lookahead else {}
    np.savez(path, mean=mean.astype(np.float32), inv_std=inv.astype(np.float32), smoothing=np.float32(0),
             note=np.array(note), **extra, **sd)


def delayed(z, lookahead):
    """The network's outputs put back on their frames: with a look-ahead of L frames, the output
    after frame t + L is the decision for frame t (the last L frames get the decision made after
    the input's last frame is repeated L times, as the product does at the end of a file)."""
    return z[:, lookahead:] if lookahead else z


def from_npz(path):
    ck = np.load(path)
    c1, nin, k = ck["conv1.weight"].shape
    net = Net(nin, c1, ck["gru.weight_hh_l0"].shape[1], k)
    sd = {k2: torch.from_numpy(ck[k2]) for k2 in net.state_dict()}
    sd["out.weight"] = sd["out.weight"].reshape(1, -1)
    net.load_state_dict(sd)
    return net, ck["mean"], ck["inv_std"], int(ck["lookahead"]) if "lookahead" in ck else 0


def compress(X, A, t, w):
    """Drops the frames the product does not feed the network (digital silence) from each
    sequence, padding at the end with frames of weight 0 (after the last real frame, so causal
    outputs before it are unchanged)."""
    bad = np.flatnonzero(~A.all(axis=1))
    for i in bad:
        keep = np.flatnonzero(A[i]); n = len(keep)
        for arr in (X, t, w):
            arr[i, :n] = arr[i, keep]; arr[i, n:] = 0
    return X, t, w


def pr_auc(p, y):
    o = np.argsort(-p); y = y[o]
    tp = np.cumsum(y); fp = np.cumsum(1 - y)
    prec = tp / np.maximum(tp + fp, 1); rec = tp / max(tp[-1], 1)
    return float(np.sum(np.diff(np.concatenate([[0], rec])) * prec))


def validate(net, V, mean, inv, lookahead=0):
    net.eval()
    outs = []
    with torch.no_grad():
        for i in range(0, len(V["X"]), 64):
            x = standardise(torch.from_numpy(V["X"][i:i + 64].astype(np.float32)), mean, inv)
            outs.append(torch.sigmoid(delayed(net(x), lookahead)).numpy())
    net.train()
    p = np.concatenate(outs)
    F_ = p.shape[1]
    has = V["has"]
    keep = V["w"][has][:, :F_] > 0
    ps, ys = p[has][keep], V["label"][has][:, :F_][keep].astype(np.float32)
    tp = np.sum((ps >= 0.5) & (ys > 0.5)); f1 = 2 * tp / max(np.sum(ps >= 0.5) + np.sum(ys > 0.5), 1)
    neg = p[~has][V["w"][~has][:, :F_] > 0]
    flagged = float(np.mean(neg >= 0.5)) if len(neg) else 0.0
    return dict(f1=float(f1), pr_auc=pr_auc(ps, ys), flagged=flagged, score=float(f1) - 2 * flagged)


def batch_inputs(X, rng, tilt_db, mask_bands, mean, inv):
    """A batch of raw inputs (batch, frames, NIN) as the network takes them: standardised, with
    the feature-domain augmentation when asked for. A random spectral tilt of up to +-`tilt_db`
    across the 32 mel levels of each mixture (a microphone's or a room's colouring; the levels
    over their floors and the hand features do not change under a fixed colouring), and on half
    the mixtures up to `mask_bands` adjacent bands set to the training mean (0 once standardised)
    in both band groups (the network must not lean on any one band)."""
    x = torch.from_numpy(X.astype(np.float32))
    B, M = len(x), S.MEL
    if tilt_db > 0:
        slope = torch.from_numpy(rng.uniform(-tilt_db, tilt_db, B).astype(np.float32))
        x[:, :, :M] += (slope[:, None] * torch.linspace(-1, 1, M)[None, :])[:, None, :]
    x = standardise(x, mean, inv)
    if mask_bands > 0:
        for i in range(B):
            if rng.random() < 0.5:
                w = int(rng.integers(1, mask_bands + 1)); f = int(rng.integers(0, M - w + 1))
                x[i, :, f:f + w] = 0; x[i, :, M + f:M + f + w] = 0
    return x


def train(a):
    torch.set_num_threads(a.threads)
    os.makedirs(a.out, exist_ok=True)
    D = S.load_shards(a.work, "train", a.shards)
    V = S.load_shards(a.work, "val")
    for d in (D, V):
        S.label_policy(d, getattr(a, "fill_ms", 100), getattr(a, "hangover_ms", 0))
        d["t"], d["w"] = S.targets(d, a.teacher_share)
        d["X"], d["t"], d["w"] = compress(d["X"], d["analysed"], d["t"], d["w"])
    stats = f"{a.out}/standardisation.npz"
    if os.path.exists(stats):
        st = np.load(stats); mean, inv = st["mean"], st["inv"]
    else:
        A = D["analysed"]
        sample = D["X"][:, ::4][A[:, ::4]].astype(np.float64)
        mean = sample.mean(0); std = sample.std(0)
        inv = np.where(std > 1e-6, 1 / np.maximum(std, 1e-6), 0)
        np.savez(stats, mean=mean, inv=inv)
    mean_t, inv_t = torch.tensor(mean, dtype=torch.float32), torch.tensor(inv, dtype=torch.float32)
    # Negatives of the no-speech mixtures weigh more: music and effects must not light anyone up.
    D["w"][~D["has"]] *= 1.5

    torch.manual_seed(a.seed)
    net = Net(S.NIN, a.conv, a.hidden)
    opt = torch.optim.Adam(net.parameters(), lr=a.lr)
    steps_per_epoch = len(D["X"]) // a.batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=a.epochs * steps_per_epoch, pct_start=0.1)
    start, best = 0, -1e9
    ck = f"{a.out}/last.pt"
    if os.path.exists(ck):
        c = torch.load(ck, weights_only=False)
        net.load_state_dict(c["net"]); opt.load_state_dict(c["opt"]); sched.load_state_dict(c["sched"])
        start, best = c["epoch"] + 1, c["best"]
        print(f"resumed after epoch {c['epoch']} (best score {best:.4f})", flush=True)
    log = open(f"{a.out}/log.tsv", "a")
    for epoch in range(start, a.epochs):
        t0 = time.time()
        rng = np.random.default_rng(a.seed * 1000 + epoch)
        order = rng.permutation(len(D["X"]))
        total = 0.0
        for b in range(steps_per_epoch):
            idx = np.sort(order[b * a.batch:(b + 1) * a.batch])
            x = batch_inputs(D["X"][idx], rng, a.tilt_db, a.mask_bands, mean_t, inv_t)
            t = torch.from_numpy(D["t"][idx]); w = torch.from_numpy(D["w"][idx])
            z = delayed(net(x), a.lookahead)
            if a.lookahead:
                t, w = t[:, :-a.lookahead], w[:, :-a.lookahead]
            loss = (F.binary_cross_entropy_with_logits(z, t, reduction="none") * w).sum() / w.sum()
            opt.zero_grad(); loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step(); sched.step()
            total += float(loss.detach())
        v = validate(net, V, mean_t, inv_t, a.lookahead)
        line = f"{epoch}\t{total / steps_per_epoch:.4f}\t{v['f1']:.4f}\t{v['pr_auc']:.4f}\t{v['flagged']:.4f}\t{v['score']:.4f}\t{time.time() - t0:.0f}s"
        print(line, flush=True); log.write(line + "\n"); log.flush()
        if v["score"] > best:
            best = v["score"]
            policy = "" if (a.fill_ms, a.hangover_ms) == (100, 0) else f"pauses filled to {a.fill_ms} ms, hangover {a.hangover_ms} ms, "
            if a.tilt_db > 0 or a.mask_bands > 0:
                policy += f"tilt {a.tilt_db:g} dB, band masks up to {a.mask_bands}, "
            if a.lookahead:
                policy += f"look-ahead {a.lookahead * 10} ms, "
            note = (f"train_spectral.py: seed {a.seed}, conv {a.conv}, GRU {a.hidden}, teacher share {a.teacher_share}, {policy}"
                    f"epoch {epoch + 1} of {a.epochs}, validation F1 {v['f1']:.3f}, PR-AUC {v['pr_auc']:.3f}, "
                    f"no-speech flagged {v['flagged']:.4f}")
            to_npz(f"{a.out}/best.npz", net, mean, inv, note, a.lookahead)
        torch.save(dict(net=net.state_dict(), opt=opt.state_dict(), sched=sched.state_dict(), epoch=epoch, best=best), ck + ".tmp")
        os.replace(ck + ".tmp", ck)


def frames(a):
    """Runs a checkpoint over WAV files as the product does (digitally silent frames skipped, 0)."""
    import sys, tempfile
    net, mean, inv, lookahead = from_npz(a.model)
    net.eval()
    mean_t, inv_t = torch.tensor(mean), torch.tensor(inv)
    with tempfile.TemporaryDirectory() as tmp:
        feats = S.front_end(a.files, a.tool, tmp)
    out = sys.stdout
    out.write("file,time_s,prob\n")
    for path, f in zip(a.files, feats):
        A = f[:, 1] > 0.5
        p = np.zeros(len(f), np.float32)
        if A.any():
            fed = f[A][:, 2:]
            if lookahead:   # the end of the file: the last input repeated
                fed = np.concatenate([fed, np.repeat(fed[-1:], lookahead, axis=0)])
            with torch.no_grad():
                x = standardise(torch.from_numpy(fed[None].copy()), mean_t, inv_t)
                p[A] = torch.sigmoid(delayed(net(x), lookahead))[0].numpy()
        stem = os.path.splitext(os.path.basename(path))[0]
        for i, v in enumerate(p):
            out.write(f"{stem},{i * 0.01:.2f},{v:.5f}\n")
