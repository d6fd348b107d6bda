"""`nbsymple paper`: regenerate the paper's figures and tables from asv results, plus the
science figures from simulation runs (snapshots), into plots/.

    nbsymple paper [--results results/] [--machine NAME] [--commit HASH] [--out plots/]
                   [--science | --no-science] [--rerun] [--full] [--tidal-n N] ...

Writes time_per_step.png, speedup.png, dp_vs_dsp.png, task_shares.{md,csv,png}, conservation.md,
tidal_tails.png, black_hole_passage.png and REPORT.md; `--full` writes only the full-size
tidal-tail run's tidal_tails_n15360.{png,md} and its series over dt (_dt_series.png,
_series.json). A mistake in the input (options, unreadable results, an output folder that cannot
be written) is one sentence on stderr, exit status 2, and nothing is written.

Modules: `results` reads asv results, `data` takes the numbers out of them (beside the paper's
own), `prediction` predicts the GPU versions C-E where the results lack them (SASS issue model,
stated link figures, this machine's host-task times), `figures`, `tables` and `report` write
them, `science_runs` and `science_plots` run and draw the simulations (`resumable`:
checkpoints and resume; `tides`: the Jacobi radius; `convergence`: whether a run's
internal-energy error allows its result to be called physical),
`full_size` the full-size run's figure and table, `dt_series` its series over the time step and
seeds and the test of its convergence (`stats`: the chi^2 and F p-values), `records` checks the
records paper reads back (run.json, science_runs.json, the dt series), `style` is the figures'
look, and `main` is the command line.
"""
import sys
from types import ModuleType

from .results import Results, ResultsError, load_results

__all__ = ["main", "load_results", "Results", "ResultsError"]


class _Package(ModuleType):
    """`main` (the function) is imported on first use, so that `python -m nbsymple_versions.paper`
    checks the environment (MPLBACKEND: `entry.command`) before matplotlib is imported; the
    import system's binding of the submodule `paper.main` to the package leaves it the function."""

    @property
    def main(self):
        from .main import main
        return main

    @main.setter
    def main(self, module):
        pass


sys.modules[__name__].__class__ = _Package
