"""What measures the versions from outside, one job per file or folder:

  cpu_asm/        `nbsymple cpu-asm`: the CPU kernels' machine code counted, for fixed targets
  gpu_asm/        `nbsymple gpu-asm`: the GPU kernels' machine code counted (no GPU needed)
  code_cache.py   the counted kernels' code kept on disk: compiled once per machine
  gpu_report.py   `nbsymple check --gpu-report`: C, D, E validated and timed on a GPU
  peers.py        the peer codes (REBOUND, ...) beside the versions, at the same N
  peers_warp.py   NVIDIA Warp's tile N-body kernel and a plain one, CPU or GPU
  provenance.py   the machine, libraries and commit a figure comes from
  mpi_timing.py   F's seconds per step across the ranks of a job (asv's MPI job, docs/mpi.md)
  mpi_model.py    F's scaling model past one machine, and its plot (docs/mpi.md)
"""
