# SPDX-License-Identifier: GPL-2.0
"""Verdicts from runs paired by round, for the benchmark reports.

A round runs every contender once, back to back, so that two runs of a
round meet the same phase of the host. A comparison of A against B takes
the log of A's figure over B's in each round both ran; its point is the
geometric mean of those ratios, its interval the LEVEL percentile
bootstrap interval of the mean log over resampled rounds. The verdict:
lead if the interval lies above 1 + margin, trail if below 1 - margin,
parity otherwise. EqualLocks says how often two contenders of exactly
equal speed would get a verdict other than parity, given the noise of
the pair's own per-round ratios (docs/statistics.md).
"""
import math
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95            # of the bootstrap interval
DRAWS = 4000            # bootstrap resamples of the rounds
EQUAL_SIMS = 2000       # simulated runs of two equal contenders, per round count


def bootstrap(logs, rng, draws=DRAWS):
    """The LEVEL percentile interval of the mean of logs over resampled rounds.

    logs may be one sample (a vector) or many (a matrix, one per row).
    """
    logs = np.atleast_2d(logs)
    n = logs.shape[1]
    pick = rng.integers(0, n, size=(draws, n))
    means = logs[:, pick].mean(axis=2)
    tail = 100 * (1 - LEVEL) / 2
    return np.percentile(means, tail, axis=1), np.percentile(means, 100 - tail, axis=1)


class EqualLocks:
    """How often two contenders of equal speed get a verdict other than parity.

    n rounds of two equal contenders give n log ratios drawn around 0
    with the spread sd of the pair's per-round log ratios. The interval
    of sd x Z is sd times the interval of Z, so the intervals of
    EQUAL_SIMS standard normal runs, drawn once per n, give the chance
    for any sd.
    """

    def __init__(self, rng, margin):
        self.rng = rng
        self.margin = margin
        self.bounds = {}

    def chance(self, n, sd):
        if n not in self.bounds:
            z = self.rng.standard_normal((EQUAL_SIMS, n))
            self.bounds[n] = bootstrap(z, self.rng, draws=1000)
        if sd == 0:
            return 0.0
        lo, hi = self.bounds[n]
        up, down = math.log(1 + self.margin) / sd, math.log(1 - self.margin) / sd
        return float(np.mean((lo > up) | (hi < down)))


@dataclass
class Comparison:
    ratio: float        # geometric mean of A / B over the rounds
    lo: float
    hi: float
    verdict: str        # lead, parity or trail
    rounds: int
    false_chance: float  # P(verdict other than parity | equal speed)


class Judge:
    """Compares contenders' per-round figures with one margin and one seed."""

    def __init__(self, margin, seed=1):
        self.margin = margin
        self.rng = np.random.default_rng(seed)
        self.equal = EqualLocks(self.rng, margin)

    def verdict(self, lo, hi):
        if lo > math.log(1 + self.margin):
            return "lead"
        if hi < math.log(1 - self.margin):
            return "trail"
        return "parity"

    def compare(self, a, b):
        """A against B, each {round: figure, higher is better}; None under 2 rounds."""
        common = sorted(set(a) & set(b))
        if len(common) < 2:
            return None
        logs = np.array([math.log(a[r] / b[r]) for r in common])
        lo, hi = (float(x[0]) for x in bootstrap(logs, self.rng))
        return Comparison(math.exp(logs.mean()), math.exp(lo), math.exp(hi),
                          self.verdict(lo, hi), len(common),
                          self.equal.chance(len(common), float(logs.std(ddof=1))))


def plot_comparisons(path, title, rows, margin, xlabel):
    """One horizontal bar per comparison: its ratio and interval, and the margins.

    rows: (label, Comparison or None), top to bottom.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    rows = [(label, c) for label, c in rows if c]
    colour = {"lead": "tab:green", "parity": "tab:grey", "trail": "tab:red"}
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(rows) + 1.5))
    for y, (label, c) in enumerate(reversed(rows)):
        ax.errorbar(c.ratio, y, xerr=[[c.ratio - c.lo], [c.hi - c.ratio]], fmt="o",
                    color=colour[c.verdict], capsize=3)
    ax.set_yticks(range(len(rows)), [label for label, _ in reversed(rows)],
                  fontsize="small")
    for x, style in ((1 - margin, ":"), (1.0, "-"), (1 + margin, ":")):
        ax.axvline(x, color="black", linestyle=style, linewidth=0.8)
    ax.set_xscale("log")
    plain = matplotlib.ticker.FuncFormatter(lambda x, _: f"{x:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(plain)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize="medium")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
