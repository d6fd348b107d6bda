"""The one shared integrator core; imports nothing from the version packages.

  units.py        cluster units (G = 1), their pc / Msun / km/s / Myr scales
  galaxy.py       the Allen & Santillan (1991) Galaxy in NumPy (the reference), its constants
  as91.py         the same field for one point in plain `math`: the kernels' source
  ics.py          `State`, the paper's cluster, the Salpeter mass spectrum, a black hole
  schemes.py      leapfrog and SI6A coefficients
  integrator.py   `advance`: the one stepping loop (drift, kick, force evaluations)
  pipeline.py     `ForcePipeline`, the pairwise-backend / host-kernel / version-package Protocols
  ranks.py        `OneRank`: the collectives of one process (F's ranks follow its interface)
  options.py      typed version options (`NoOptions`, `option`)
  checks.py       user values checked in one place, each refusal one sentence naming the value
  diagnostics.py  energy (the one W), its parts, angular momentum, errors
  clock.py        `TaskClock`: warm time per task
  reference.py    float64 NumPy forces for validation
  vocabulary.py   precisions, tasks, flops per interaction
  dsp.py          double-single positions
  work.py         what a piece of work costs (memory, least time) and the work refused
"""
