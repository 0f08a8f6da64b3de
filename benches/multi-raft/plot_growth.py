"""The chart of growth.sh's CSV (docs/performance.md, "Many ranges").

    python3 benches/multi-raft/plot_growth.py [--csv benches/multi-raft/growth.csv]
        [--out docs/img/multi-raft-growth.png] [--note "commit 5135541, 2026-12-07, median of 3 runs"]

Two panels against the number of ranges (log axes): the median wall seconds of a whole
`splitbrain run`, with issue 48's 30 s budget, and the peak resident set size in MiB, each
with its least-squares line (fixed cost + cost per range; also printed). Needs
matplotlib (not a CI dependency: the chart is rendered once and committed).
"""

import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

BUDGET_S = 30.0


def linear_fit(xs, ys):
    """Ordinary least squares y = a + b x; returns (a, b)."""
    n = len(xs)
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    b = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sum(
        (x - mean_x) ** 2 for x in xs
    )
    return mean_y - b * mean_x, b


def plot_with_fit(ax, xs, ys, color, label, fit_x, fit, fit_label):
    """The measured points, and the least-squares line `fit` = (fixed, per range) dotted."""
    fixed, per_range = fit
    ax.plot(xs, ys, "o-", color=color, label=label)
    ax.plot(
        fit_x,
        [fixed + per_range * x for x in fit_x],
        ":",
        color="black",
        linewidth=1.5,
        zorder=3,
        label=fit_label,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", default="benches/multi-raft/growth.csv")
    parser.add_argument("--out", default="docs/img/multi-raft-growth.png")
    parser.add_argument("--note", default="", help="the commit, date and runs, under the title")
    args = parser.parse_args()

    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    ranges = [int(r["ranges"]) for r in rows]
    wall_s = [float(r["wall_s"]) for r in rows]
    rss_mib = [int(r["max_rss_kib"]) / 1024 for r in rows]

    fig, (time_ax, mem_ax) = plt.subplots(1, 2, figsize=(11, 4.6))
    title = "MultiRaft growth: 7 stores, replication 3, 60 s simulated, no faults"
    if args.note:
        title += f"\n(release binary, {args.note})"
    fig.suptitle(title, fontsize=12)
    thousands = FuncFormatter(lambda x, _: f"{x:,.0f}")

    # Least-squares lines, fixed cost + cost per range: on log axes a straight line bends, and
    # the points following the bend is what linear growth looks like here.
    time_fixed_s, time_per_range_s = linear_fit(ranges, wall_s)
    mem_fixed_mib, mem_per_range_mib = linear_fit(ranges, rss_mib)
    print(
        f"least squares: wall = {time_fixed_s * 1e3:.2f} ms + {time_per_range_s * 1e6:.2f} us/range; "
        f"peak RSS = {mem_fixed_mib:.2f} MiB + {mem_per_range_mib * 1024:.3f} KiB/range"
    )
    fit_x = [ranges[0] * (ranges[-1] / ranges[0]) ** (i / 100) for i in range(101)]

    plot_with_fit(
        time_ax, ranges, wall_s, "tab:blue", "wall time (median)", fit_x,
        (time_fixed_s, time_per_range_s),
        f"fit: {time_fixed_s * 1e3:.1f} ms + {time_per_range_s * 1e6:.1f} µs/range",
    )
    time_ax.axhline(BUDGET_S, color="tab:red", linestyle="--", label="30 s budget (issue 48)")
    time_ax.set_xscale("log")
    time_ax.set_yscale("log")
    time_ax.set_ylim(min(wall_s) / 2, BUDGET_S * 3)
    time_ax.set_xlabel("ranges (log scale)")
    time_ax.set_ylabel("wall time of the whole run, s (log scale)")
    time_ax.set_title("Time")
    time_ax.xaxis.set_major_formatter(thousands)
    time_ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    time_ax.grid(True, which="both", alpha=0.3)
    time_ax.legend(loc="center left", fontsize=9)
    time_ax.annotate(
        f"{wall_s[-1]:.3f} s",
        (ranges[-1], wall_s[-1]),
        textcoords="offset points",
        xytext=(-10, 10),
        ha="right",
    )

    plot_with_fit(
        mem_ax, ranges, rss_mib, "tab:green", "peak RSS (median)", fit_x,
        (mem_fixed_mib, mem_per_range_mib),
        f"fit: {mem_fixed_mib:.1f} MiB + {mem_per_range_mib * 1024:.2f} KiB/range",
    )
    mem_ax.set_xscale("log")
    mem_ax.set_ylim(0, max(rss_mib) * 1.2)
    mem_ax.set_xlabel("ranges (log scale)")
    mem_ax.set_ylabel("peak resident set size, MiB")
    mem_ax.set_title("Memory")
    mem_ax.xaxis.set_major_formatter(thousands)
    mem_ax.grid(True, which="both", alpha=0.3)
    mem_ax.legend(loc="upper left", fontsize=9)
    mem_ax.annotate(
        f"{rss_mib[-1]:.1f} MiB",
        (ranges[-1], rss_mib[-1]),
        textcoords="offset points",
        xytext=(-10, 8),
        ha="right",
    )

    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
