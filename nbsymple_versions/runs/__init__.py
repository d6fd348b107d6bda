"""`nbsymple run` for all six versions, one job per file:

  driver.py       the run: fresh or resumed, stepped with snapshots, checkpoints and signals
  report.py       what a finished run prints (text or JSON)
  memory.py       will N bodies fit, how long the O(N^2) set-up takes
  signals.py      SIGINT / SIGTERM: finish the step, checkpoint, stop (or at once in the set-up)
  locks.py        exclusive locks on a run's snapshot folder and checkpoint, for its whole life
  errors.py       `RunStop` (one sentence, an exit status), `user_values`, `writable`
  mpi_timing.py   version F's seconds per step across the ranks of a job (for asv, docs/mpi.md)
"""
