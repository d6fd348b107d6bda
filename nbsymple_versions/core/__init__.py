"""The one shared integrator core: units, galaxy, initial conditions, schemes, stepping loop,
diagnostics, task clock and the float64 reference. Imports nothing from kernels or versions."""
