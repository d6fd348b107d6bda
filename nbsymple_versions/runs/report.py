"""What a finished `nbsymple run` prints: the text summary, or one JSON object. An error that
is undefined (a zero reference, e.g. L0 of bodies at rest) is `null` in JSON and "undefined
(L0 = 0)" in the text: every figure is a number or says why it is none."""
import json

from ..core.diagnostics import at_resolution
from ..entry import printable, stood_still
from ..instruments.provenance import code_version


def _figure(value, reason) -> str:
    """An error for the text summary: 1.234e-05, or 'undefined (L0 = 0)'."""
    return f"undefined ({reason})" if value is None else f"{value:.3e}"


def session_device(sim) -> str:
    """Where and by what a session of the run ran: device, threads, the CPU its kernels were
    compiled for (NUMBA_CPU_NAME, or the host's) and the code's commit (`code_version`). Another
    CPU gives other kernels, and another commit may round otherwise (470da02's halo pull did, by
    an ulp): a run resumed by either goes on within rounding, not bit for bit, and a chaotic
    cluster's run parts from the one it continues."""
    from ..serial.kernels import compiled_for
    return f"{sim.device}; threads: {sim.threads}; code for {compiled_for()}; {code_version()}"


def report(args, run_, sim, folder, checkpoint, start) -> int:
    """Print the finished run: one JSON object (`--json`) or the text summary; status 0. The
    errors are collective (every rank computes them); rank 0 alone prints. Its times are
    wall-clock, summed over the run's sessions: where a rank was stopped and continued while it
    stepped (`run_["stood_still"]`, any session), they include the stops, and it says so; where
    the sessions ran on other devices or threads (`run_["devices"]`), it names them."""
    errors = sim.errors()
    if not sim.is_root:
        return 0
    stops, devices = run_.get("stood_still") or 0, run_.get("devices") or []
    now = session_device(sim)
    earlier = [d for d in devices if d != now]
    why = sim.undefined_reasons(errors)
    shown = {name: _figure(value, why.get(name)) for name, value in errors.items()}
    typed = sim.version.options_from(sim.options)         # every option as it ran, defaults and F's chosen node
    options = {d["name"]: getattr(typed, d["name"]) for d in typed.describe()}       # version (a hunt: none named)
    if options.get("node_version") == "B":                # F on B's CPU kernels: its GPU options are not used
        options = {"node_version": "B"}
    result = {
        "version": sim.version.letter, "n": sim.state.n, "scheme": sim.scheme.name, "precision": sim.precision,
        "dt": sim.dt, "steps": run_["steps"], "options": options,
        # bodies from --ics were drawn by no seed of ours: none is named (the checkpoint keeps the one drawn)
        "seed": None if run_.get("ics") else run_["seed"],
        "seed_chosen": False if run_.get("ics") else run_["seed_chosen"],
        "ics": run_.get("ics"), "mass_classes": run_.get("mass_classes"), "constants": sim.state.units.constants,
        "r_cl_pc": sim.state.units.r_cl_pc, "mass_msun": sim.state.units.mass_msun,
        "t": sim.state.t, "t_myr": sim.state.units.to_myr(sim.state.t),
        **errors, "undefined": why, "seconds_per_step": sim.seconds_per_step if sim.steps_done else None,
        "task_seconds": dict(sim.clock.seconds), "task_shares": sim.clock.shares() if sim.steps_done else None,
        "threads": sim.threads, "device": sim.device, "devices_by_session": devices or [now],
        "code": code_version(),
        "compile_seconds": sim.compile_seconds,
        "checkpoint": None if checkpoint is None else str(checkpoint),
        "resumed_from_step": start if args.resume else None, "run_id": run_["run_id"],
        "stopped_and_continued": stops,
    }
    if args.json:
        print(json.dumps(result, allow_nan=False))
        return 0
    s = sim.state
    print(f"version {result['version']} ({sim.version.description})")
    print(f"N = {s.n}, {sim.scheme.name}, {sim.precision}, dt = {sim.dt:g}, {run_['steps']} steps"
          + (f" (resumed at step {start})" if args.resume else "")
          + f", t = {s.t:g} T = {s.units.to_myr(s.t):.3g} Myr")
    u = s.units
    scale = f"r_cl = {u.r_cl_pc:g} pc, M = {u.mass_msun:g} Msun, {u.constants} constants" + (
        f", {run_['mass_classes']} mass classes" if run_.get("mass_classes") else "")
    if run_.get("ics"):                  # the file fixes the bodies: no seed to repeat them with
        print(f"bodies from {printable(run_['ics'])} ({scale})")
    else:
        chosen = (" (drawn at random; --seed {0} draws these bodies again)".format(run_["seed"])
                  if run_["seed_chosen"] else "")
        print(f"seed {run_['seed']}{chosen}; {scale}")
    print(f"device: {now}" + (f" (earlier sessions: {', '.join(map(printable, earlier))})" if earlier else ""))
    if options:
        print("options: " + ", ".join(f"{d['flag']} {options[d['name']]}" for d in typed.describe()
                                      if d["name"] in options))
    print(f"energy error            {shown['energy_error']}   |E - E0| / |E0|, E = cluster + Galaxy "
          "(the paper's definition)")
    if at_resolution(errors["energy_error"]):
        print(f"{'':24}(within two float64 roundings of E: the internal error below measures the change)")
    internal = f"internal energy error   {shown['internal_energy_error']}"
    label = "|E - E0| / |K_int0 + W0|, the same change in units of the cluster's own energy at t0"
    # undefined for a lone body (K_int0 + W0 = 0): its label then goes below, within 120 characters
    print(f"{internal}   {label}" if len(internal) + 3 + len(label) <= 120 else f"{internal}\n{'':24}{label}")
    print(f"angular momentum error  {shown['angular_momentum_error']}")
    if sim.steps_done:
        print(f"seconds per step        {result['seconds_per_step']:.4g}"
              + (f"   (it was {stood_still(stops)})" if stops else ""))
        print("task shares             " + ", ".join(f"{k} {v:.2f} %" for k, v in result["task_shares"].items()))
    if folder is not None:
        print(f"snapshots in {printable(folder)}")
    if checkpoint is not None:
        print(f"checkpoint {printable(checkpoint)} (step {sim.steps_done})")
    return 0
