"""One row of bench/open_regions: the open frontier of a checkpoint, measured (see that script)."""
import heapq
import json
import sys
import tomllib

import numpy as np
import torch

torch.set_default_dtype(torch.float64)


class Network:
    """A Dense/ReLU network read from mlp-json-v1; logit = the last layer's output."""

    def __init__(self, path):
        m = json.load(open(path))
        self.w, self.b = [], []
        width = m["input_dim"]
        for layer in m["layers"]:
            w = torch.tensor(layer["weights"])
            self.w.append(w if w.shape[1] == width else w.T)
            self.b.append(torch.tensor(layer["bias"]))
            width = self.b[-1].shape[0]
        self.depth = len(self.w)

    def pre_activations(self, x):
        out, h = [], x
        for k in range(self.depth):
            h = h @ self.w[k].T + self.b[k]
            out.append(h)
            h = h.clamp(min=0)
        return out

    def logit(self, x):
        return self.pre_activations(x)[-1][:, 0]

    def back_substitute(self, coef, k, lows, ups, lo, hi, lower, alpha=None):
        """Bound coef . h_k over [lo, hi] (batch): DeepPoly's lower slopes or `alpha`; (bound, input coefficients)."""
        lam, const = coef, torch.zeros(coef.shape[:2])
        for j in range(k, -1, -1):
            const = const + lam @ self.b[j]
            lam = lam @ self.w[j]
            if j == 0:
                break
            l, u = lows[j - 1], ups[j - 1]
            active, inactive = l >= 0, u <= 0
            unstable = ~(active | inactive)
            s = torch.where(unstable, u / (u - l).clamp(min=1e-30), active.double()).unsqueeze(1)
            intercept = torch.where(unstable, -s.squeeze(1) * l, torch.zeros_like(l)).unsqueeze(1)
            a = torch.where(unstable, (u > -l).double(), active.double())
            a = (alpha[j - 1] if alpha is not None else a).unsqueeze(1)
            pos, neg = lam.clamp(min=0), lam.clamp(max=0)
            if lower:
                const, lam = const + (neg * intercept).sum(-1), pos * a + neg * s
            else:
                const, lam = const + (pos * intercept).sum(-1), pos * s + neg * a
        lo, hi = lo.unsqueeze(1), hi.unsqueeze(1)
        if lower:
            return const + (lam.clamp(min=0) * lo + lam.clamp(max=0) * hi).sum(-1), lam
        return const + (lam.clamp(min=0) * hi + lam.clamp(max=0) * lo).sum(-1), lam

    def hidden_bounds(self, lo, hi, phase=None):
        lows, ups = [], []
        for k in range(self.depth - 1):
            n = self.b[k].shape[0]
            eye = torch.eye(n).expand(lo.shape[0], n, n)
            l = self.back_substitute(eye, k, lows, ups, lo, hi, True)[0]
            u = self.back_substitute(eye, k, lows, ups, lo, hi, False)[0]
            if phase is not None:  # a ReLU split: the branch's points have h >= 0 (or <= 0)
                p = torch.tensor(phase[k])[None]
                l, u = torch.where(p > 0, l.clamp(min=0), l), torch.where(p < 0, u.clamp(max=0), u)
            lows.append(l)
            ups.append(u)
        return lows, ups

    def output_bound(self, lo, hi, lower, lows, ups, alpha=None):
        v, lam = self.back_substitute(torch.ones(lo.shape[0], 1, 1), self.depth - 1, lows, ups, lo, hi, lower, alpha)
        return v[:, 0], lam[:, 0, :]


def proved(net, lo, hi, above, phase=None):
    """(how far past the threshold the bound is on the right side, input coefficients, lows, ups)."""
    lo, hi = torch.tensor(lo)[None], torch.tensor(hi)[None]
    lows, ups = net.hidden_bounds(lo, hi, phase)
    v, lam = net.output_bound(lo, hi, above, lows, ups)
    return (v if above else -v).item(), lam[0].numpy(), lows, ups


def relu_branch_and_bound(net, lo, hi, above, budget):
    phase = [np.zeros(b.shape[0], int) for b in net.b[:-1]]
    v, _, lows, ups = proved(net, lo, hi, above, phase)
    used, heap, order = 1, [(v, 0, phase, lows, ups)], 1
    while heap:
        v, _, ph, lows, ups = heapq.heappop(heap)
        if v > 0:
            continue
        best, score = None, -1.0
        for k in range(net.depth - 1):
            l, u = lows[k][0].numpy(), ups[k][0].numpy()
            for n in range(len(l)):
                if l[n] < 0 < u[n] and ph[k][n] == 0 and -l[n] * u[n] / (u[n] - l[n]) > score:
                    best, score = (k, n), -l[n] * u[n] / (u[n] - l[n])
        if best is None:
            return False
        for side in (1, -1):
            if used >= budget:
                return False
            p2 = [x.copy() for x in ph]
            p2[best[0]][best[1]] = side
            v2, _, l2, u2 = proved(net, lo, hi, above, p2)
            used += 1
            if v2 <= 0:
                heapq.heappush(heap, (v2, order, p2, l2, u2))
                order += 1
    return True


def input_branch_and_bound(net, lo, hi, above, budget):
    v, lam, _, _ = proved(net, lo, hi, above)
    used, heap, order = 1, [(v, 0, lo, hi, lam)], 1
    while heap:
        v, _, l, h, lam = heapq.heappop(heap)
        if v > 0:
            continue
        score = (h - l) * np.abs(lam)
        score[h == l] = -1
        f = int(np.argmax(score))
        if score[f] <= 0:
            return False
        mid = np.floor((l[f] + h[f]) / 2)
        for a, b in ((l[f], mid), (mid + 1, h[f])):
            if used >= budget:
                return False
            l2, h2 = l.copy(), h.copy()
            l2[f], h2[f] = a, b
            v2, lam2, _, _ = proved(net, l2, h2, above)
            used += 1
            if v2 <= 0:
                heapq.heappush(heap, (v2, order, l2, h2, lam2))
                order += 1
    return True


def main():
    mlp, state_path, answer_path, schema_path, protected, name = sys.argv[1:7]
    n_regions, n_bab, budget = (int(a) for a in sys.argv[7:10])
    features = [f["name"] for f in tomllib.load(open(schema_path, "rb"))["features"]]
    p = features.index(protected)
    net = Network(mlp)
    state = json.load(open(state_path))
    answer = json.load(open(answer_path))
    regions = state["open"]
    rng = np.random.default_rng(1)
    points = np.array([np.prod(np.delete(np.array(r["hi"]) - np.array(r["lo"]) + 1.0, p)) for r in regions])
    drawn = rng.choice(len(regions), size=n_regions, p=points / points.sum(), replace=True)
    straddle, one_side = 0, []  # one_side: (lo, hi, above) per copy
    for i in drawn:
        lo, hi = np.array(regions[i]["lo"], float), np.array(regions[i]["hi"], float)
        x = rng.integers(lo, hi + 1, size=(512, len(lo))).astype(float)
        copies = []
        for c in range(int(lo[p]), int(hi[p]) + 1):
            xc = x.copy()
            xc[:, p] = c
            copies.append((c, net.logit(torch.tensor(xc))))
        if all((z > 0).all() for _, z in copies) or all((z <= 0).all() for _, z in copies):
            above = bool((copies[0][1] > 0).all())
            for c, _ in copies:
                l, h = lo.copy(), hi.copy()
                l[p] = h[p] = c
                one_side.append((l, h, above))
        else:
            straddle += 1
    # Plain and slope-optimised bounds on every one-side copy at once.
    lo = torch.tensor(np.array([c[0] for c in one_side]))
    hi = torch.tensor(np.array([c[1] for c in one_side]))
    above = torch.tensor([c[2] for c in one_side])
    lows, ups = net.hidden_bounds(lo, hi)
    lb, _ = net.output_bound(lo, hi, True, lows, ups)
    ub, _ = net.output_bound(lo, hi, False, lows, ups)
    plain = torch.where(above, lb > 0, ub <= 0)
    bound = torch.where(above, lb, ub)
    alpha = [torch.where((l < 0) & (u > 0), (u > -l).double(), (l >= 0).double()).requires_grad_(True)
             for l, u in zip(lows, ups)]
    opt = torch.optim.Adam(alpha, lr=0.1)
    for _ in range(60):
        a = [x.clamp(0, 1) for x in alpha]
        lb_a, _ = net.output_bound(lo, hi, True, lows, ups, a)
        ub_a, _ = net.output_bound(lo, hi, False, lows, ups, a)
        opt.zero_grad()
        torch.where(above, -lb_a, ub_a).sum().backward()
        opt.step()
    with torch.no_grad():
        a = [x.clamp(0, 1) for x in alpha]
        lb_a, _ = net.output_bound(lo, hi, True, lows, ups, a)
        ub_a, _ = net.output_bound(lo, hi, False, lows, ups, a)
    optimised = torch.where(above, lb_a > 0, ub_a <= 0) | plain
    # Margins, slack and the hidden layers' looseness.
    margins, slacks, widths = [], [], [[] for _ in range(net.depth - 1)]
    for n in range(len(one_side)):
        l, h = one_side[n][0], one_side[n][1]
        x = torch.tensor(rng.integers(l, h + 1, size=(4096, len(l))).astype(float))
        pre = net.pre_activations(x)
        z = pre[-1][:, 0]
        extreme = z.min() if one_side[n][2] else z.max()
        margins.append(abs(extreme.item()))
        slacks.append(abs((extreme - bound[n]).item()))
        for k in range(net.depth - 1):
            spread = (pre[k].max(0).values - pre[k].min(0).values).clamp(min=1e-9)
            widths[k].append(((ups[k][n] - lows[k][n]) / spread).median().item())
    # Branch and bound on a few of them, each way.
    picks = rng.choice(len(one_side), size=min(n_bab, len(one_side)), replace=False) if one_side else []
    relu = sum(relu_branch_and_bound(net, *one_side[i], budget) for i in picks)
    inputs = sum(input_branch_and_bound(net, *one_side[i], budget) for i in picks)
    undecided = 100.0 * answer["undecided"]
    k = len(one_side)
    layer_text = ", ".join(f"{np.median(w):.3g}" for w in widths)
    print(f"| {name} | {undecided:.3g} | {len(regions):,} | {straddle / n_regions:.0%} | {np.median(margins):.3g} | "
          f"{np.median(slacks):.3g} | {layer_text} | {int(plain.sum())}/{k} | {int(optimised.sum())}/{k} | "
          f"{relu}/{len(picks)} | {inputs}/{len(picks)} |")


main()
