"""A run that survives interruption and lands on disk (`nbsymple run`, all six versions, and the
paper's science runs), one job per file:

  spec.py         `RunSpec`: a run asked for, typed, frozen and checked (the CLI's flags, or Python)
  driver.py       the run: fresh or resumed, its paths, seeds and refusals
  loop.py         the one stepping loop: snapshots, checkpoints, a stop after a whole step
  report.py       what a finished run prints (text or JSON)
  memory.py       will N bodies fit, how long the O(N^2) set-up takes
  signals.py      SIGINT / SIGTERM: finish the step, checkpoint, stop (or at once in the set-up)
  locks.py        exclusive locks on a run's snapshot folder and checkpoint, for its whole life
  paths.py        the one door for files read (regular, bounded) and written (never through a link)
  errors.py       `RunStop` (one sentence, an exit status), `user_values`, `writable`
  checkpoint.py   the checkpoint file: atomic, checksummed, resumed bit for bit
  snapshots.py    snapshot files and folders (npz, or the authors' layout)
  authors_format.py  the authors' ASCII layout, x y z vx vy vz m per line
  progress.py     a progress line on stderr
"""
