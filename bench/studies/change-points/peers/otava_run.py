"""Apache Otava's change points on each series of a series file, alone, at Otava's defaults: its analysis entry point
otava.analysis.compute_change_points (the split-and-merge E-Divisive of Fleming et al., "Hunter"), with the defaults
otava.series.AnalysisOptions holds and `otava analyze` uses (window_len 50, max_pvalue 0.001, min_magnitude 0.0), on a
plain Python list of the values. Deterministic (no permutation test at these defaults).

    .cache/change-points-otava/bin/python bench/studies/change-points/peers/otava_run.py <series.json> <out.json>

Output: peer_common.py.
"""

from importlib.metadata import version

from otava.analysis import compute_change_points
from otava.series import AnalysisOptions
from peer_common import run

DEFAULTS = AnalysisOptions()


def detect(values: list[float], _seed: int) -> list[int]:
    change_points, _weak = compute_change_points(
        list(values),
        window_len=DEFAULTS.window_len,
        max_pvalue=DEFAULTS.max_pvalue,
        min_magnitude=DEFAULTS.min_magnitude,
    )
    return [int(point.index) for point in change_points]


if __name__ == "__main__":
    run(
        "Apache Otava",
        f"apache-otava {version('apache-otava')}",
        {
            "window_len": DEFAULTS.window_len,
            "max_pvalue": DEFAULTS.max_pvalue,
            "min_magnitude": DEFAULTS.min_magnitude,
        },
        detect,
    )
