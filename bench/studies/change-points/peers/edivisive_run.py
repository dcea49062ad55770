"""MongoDB's E-Divisive (signal-processing-algorithms) change points on each series of a series file, alone, at its
defaults: signal_processing_algorithms.energy_statistics.energy_statistics.e_divisive(series) (pvalue 0.05,
permutations 100). Its permutation test draws from numpy's global generator: seeded per call with the series' index,
so that a run replays (the prefix re-runs of a series use the same seed).

    .cache/change-points-edivisive/bin/python \
        bench/studies/change-points/peers/edivisive_run.py <series.json> <out.json>

Output: peer_common.py; the parameters also say whether the package's C extension ran (else its numpy code).
"""

import inspect
from importlib.metadata import version

import numpy as np
from peer_common import run
from signal_processing_algorithms.energy_statistics.cext_calculator import C_EXTENSION_LOADED
from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

DEFAULTS = {
    name: parameter.default
    for name, parameter in inspect.signature(e_divisive).parameters.items()
    if parameter.default is not inspect.Parameter.empty
}


def detect(values: list[float], seed: int) -> list[int]:
    np.random.seed(seed)
    return [int(index) for index in e_divisive(values)]


if __name__ == "__main__":
    run(
        "MongoDB E-Divisive",
        f"signal-processing-algorithms {version('signal-processing-algorithms')}, numpy {np.__version__}",
        {**DEFAULTS, "c_extension": C_EXTENSION_LOADED},
        detect,
    )
