"""Statistics of repeated runs: per-side :class:`Stat`, confidence intervals (:class:`Spread`)
of candidate - baseline by Welch's t (repeated bench runs) or from lm-eval's stderrs.

Pure arithmetic on floats; docs/report.md ("Noise") explains the choices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Two-sided 95 % quantiles of Student's t, t(0.975; df), from the standard table (NIST/SEMATECH
#: e-Handbook of Statistical Methods, section 1.3.6.7.2). A fractional Welch df is floored and
#: looked up at the largest tabulated df not above it, which widens the interval (conservative).
T_975: dict[int, float] = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    11: 2.201,
    12: 2.179,
    13: 2.160,
    14: 2.145,
    15: 2.131,
    16: 2.120,
    17: 2.110,
    18: 2.101,
    19: 2.093,
    20: 2.086,
    21: 2.080,
    22: 2.074,
    23: 2.069,
    24: 2.064,
    25: 2.060,
    26: 2.056,
    27: 2.052,
    28: 2.048,
    29: 2.045,
    30: 2.042,
    40: 2.021,
    60: 2.000,
    120: 1.980,
}

#: The normal distribution's 97.5 % quantile (lm-eval stderr intervals).
Z_975 = 1.960

CI_LEVEL = 0.95

WELCH = "Welch t"

EVAL_NORMAL = "normal approximation from lm-eval stderr"


@dataclass(frozen=True)
class Stat:
    """Mean, min-max and sample standard deviation of one metric over one side's runs.

    Attributes:
        values: one value per run, in file order.
    """

    values: tuple[float, ...]

    @property
    def n(self) -> int:
        """Number of runs."""
        return len(self.values)

    @property
    def mean(self) -> float:
        """Arithmetic mean over the runs."""
        return math.fsum(self.values) / len(self.values)

    @property
    def min(self) -> float:
        """Smallest run value."""
        return min(self.values)

    @property
    def max(self) -> float:
        """Largest run value."""
        return max(self.values)

    @property
    def variance(self) -> float | None:
        """Sample variance (divisor n - 1), or None for one run (the spread is unknown)."""
        if self.n < 2:
            return None
        if len(set(self.values)) == 1:
            return 0.0  # exactly: the mean of equal floats may be off by an ulp
        m = self.mean
        return math.fsum((v - m) ** 2 for v in self.values) / (self.n - 1)

    @property
    def std(self) -> float | None:
        """Sample standard deviation (divisor n - 1), or None for one run."""
        var = self.variance
        return math.sqrt(var) if var is not None else None

    def to_dict(self) -> dict[str, Any]:
        """JSON form: mean, min, max, n, std (null for one run) and the per-run values."""
        return {
            "mean": self.mean,
            "min": self.min,
            "max": self.max,
            "n": self.n,
            "std": self.std,
            "values": list(self.values),
        }


@dataclass(frozen=True)
class Spread:
    """A confidence interval of the difference candidate - baseline, in the row's unit.

    Attributes:
        method: :data:`WELCH` (repeated runs on both sides) or :data:`EVAL_NORMAL`.
        level: the confidence level (0.95).
        low, high: the interval's ends (same unit as the row's delta).
        df: the Welch degrees of freedom (before flooring), or None.
    """

    method: str
    level: float
    low: float
    high: float
    df: float | None = None

    @property
    def significant(self) -> bool:
        """True when the interval excludes 0 (a degenerate interval at a non-zero delta too)."""
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form: method, level, low, high, df, significant."""
        return {
            "method": self.method,
            "level": self.level,
            "low": self.low,
            "high": self.high,
            "df": self.df,
            "significant": self.significant,
        }


def t_quantile_975(df: float) -> float:
    """t(0.975; df) from :data:`T_975`: df floored, then the largest tabulated df not above it.

    Args:
        df: degrees of freedom (> 0; values below 1 use df = 1).

    Returns:
        The quantile (12.706 for df 1, 4.303 for df 2, …, 1.980 from df 120 on).
    """
    d = max(1, int(math.floor(df)))
    return T_975[max(k for k in T_975 if k <= d)]


def welch_interval(a: Stat, b: Stat) -> Spread | None:
    """95 % Welch t interval of mean(b) - mean(a) (unequal variances), or None.

    se = sqrt(s_a^2/n_a + s_b^2/n_b); df = se^4 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1))
    (Welch-Satterthwaite); interval = delta ± t(0.975; df) * se with :func:`t_quantile_975`.

    Args:
        a: baseline runs; b: candidate runs.

    Returns:
        None when a side has fewer than 2 runs (its spread is unknown). When both sides show no
        spread at all (se = 0) the interval is the point delta itself.
    """
    va, vb = a.variance, b.variance
    if va is None or vb is None:
        return None
    delta = b.mean - a.mean
    qa, qb = va / a.n, vb / b.n
    se2 = qa + qb
    if se2 == 0:
        return Spread(WELCH, CI_LEVEL, delta, delta, None)
    df = se2**2 / (qa**2 / (a.n - 1) + qb**2 / (b.n - 1))
    half = t_quantile_975(df) * math.sqrt(se2)
    return Spread(WELCH, CI_LEVEL, delta - half, delta + half, df)


def stderr_interval(delta: float, se_a: float, se_b: float) -> Spread:
    """95 % normal interval of an lm-eval score difference from the two reported stderrs.

    delta ± 1.96 * sqrt(se_a^2 + se_b^2). The two scores are treated as independent; two runs
    on the same samples are positively correlated, so the true interval is narrower: this
    errs on the side of "not significant".
    """
    half = Z_975 * math.sqrt(se_a**2 + se_b**2)
    return Spread(EVAL_NORMAL, CI_LEVEL, delta - half, delta + half, None)
