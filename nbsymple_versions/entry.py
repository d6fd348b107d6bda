"""The one way every command starts and ends (`nbsymple ...`, `python -m nbsymple_versions.paper`,
`python -m nbsymple_versions.instruments.*`, `python -m tools.*`): `command(name, body)`.

- **The environment** is checked first (`environment.process_problem`, `environment.problem`),
  before the command imports numba, matplotlib or MPI: a removed current folder, too small a
  limit on open files or memory or a variable set to garbage is one sentence, exit status 2.
  Running out of open files (EMFILE, ENFILE) or memory later is one sentence too, status 4.
- **Streams.** What the command prints goes through a guard on stdout: a reader that went away
  (EPIPE: `| head -1`) ends it quietly with 141 (128 + SIGPIPE, what a shell reports for a
  process SIGPIPE killed); any other failure to write (ENOSPC: `> /dev/full`, EIO) is one
  sentence on stderr and status 4, a fault of the machine, as for the run's own files. A pipe
  that a process sharing it made non-blocking, full while its reader is busy, is waited on
  (`_PatientWriter`): a slow reader is no fault. What is
  kept (a checkpoint already written) is named by the notes the command adds to the error
  (`OutputFailed.add_note`). A standard stream closed when the process started (`>&-`, `2>&-`)
  gets /dev/null on its descriptor, so that no file opened later takes that number (and no
  library's or child's write to it lands in a checkpoint); stdout then fails as a closed
  descriptor does (EBADF: one sentence, status 4), and what goes to a closed stderr is lost, as
  is what a stderr that cannot be written takes (`2>/dev/full`): the command goes on.
  What goes to stderr is `shown`: a carriage return, a Unicode line break or an escape sequence
  that user text (a path, an argument) brings into a sentence is written as its escape.
- **Children.** SIGTERM, SIGHUP, SIGXCPU, SIGUSR1, SIGUSR2 and SIGALRM (`TERMINATING`) raise `Terminated` (a
  KeyboardInterrupt, as SIGINT's own) in the main thread, so the command unwinds through its
  `finally` blocks and context managers, which end the processes it started, and exits with 128 +
  the signal's number. A child is started with `child_process` (its process group ended with the
  block that started it; the compilers of `nbsymple cpu-asm`, asv under `tools.tracking`) or
  `subprocess.run` (which kills its child on any exception). A command that handles signals itself
  (`nbsymple run`'s `runs.signals`) installs its handlers over these for its duration.
  Under Python 3.11 a thread wakes the main thread every SIGNAL_WATCH_S to the signals caught on
  another thread (`_signal_watch`): without it, a SIGTERM followed by a SIGCONT (`timeout`,
  systemd, Slurm) was lost 6 times in 10, the command running on.
"""
import atexit
import codecs
import contextlib
from contextlib import contextmanager
import errno
import io
import os
import select
import shlex
import signal
import subprocess
import sys
import threading

from . import environment, loading
from .core import work        # sizes in words; imports no numba

USAGE = 2                  # a mistake in what the user typed or set
FAULT = 4                  # a fault of the machine: a write that failed (a full disk), stdout's or a run's files'
BROKEN_PIPE = 128 + signal.SIGPIPE    # 141: the reader of our output went away
# SIGXCPU: a CPU-time limit's soft limit reached (`ulimit -St`, a batch system's); sent again every
# CPU second until the hard limit's SIGKILL, and a repeat is no second signal (`repeated`).
# SIGUSR1, SIGUSR2: a batch system's warning before the end of a job's time (Slurm's
# `--signal=USR1@SECONDS`, Grid Engine's `-notify`), which mpiexec passes on to every rank
# SIGALRM: `timeout -s ALRM`, a scheduler's end of time. Not SIGVTALRM or SIGPROF: a sampling profiler's timers
TERMINATING = (signal.SIGTERM, signal.SIGHUP, signal.SIGXCPU, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM)
HELD = (signal.SIGINT, *TERMINATING)
GRACE = 10                 # seconds a child group has to end on SIGTERM before SIGKILL
SIGNAL_WATCH_S = 0.2       # how often `_signal_watch` wakes the main thread to its pending signals (Python 3.11)


class OutputFailed(Exception):
    """stdout could not be written; `errno` says why (EPIPE: the reader went away)."""

    def __init__(self, error: OSError):
        super().__init__(environment.os_reason(error))
        self.errno = error.errno


class Terminated(KeyboardInterrupt):
    """A signal of TERMINATING, raised where the main thread is, so that it unwinds as for Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class _GuardedStdout:
    """sys.stdout, whose failures to write raise OutputFailed (not an OSError, so that no
    handler of the command's file faults takes it for one of them). `stream` None: stdout was
    closed when the process started, and every write fails as one to a closed descriptor."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            if self._stream is None or self._stream.closed:       # (closed in Python: a ValueError, a hunt)
                raise OSError(errno.EBADF, os.strerror(errno.EBADF))
            return self._stream.write(text)
        except OSError as e:
            raise OutputFailed(e) from None

    def flush(self):
        try:
            if self._stream is not None and not self._stream.closed:
                self._stream.flush()
        except OSError as e:
            raise OutputFailed(e) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _PatientWriter(io.RawIOBase):
    """stdout's descriptor `fd`, each write written whole: where the descriptor is non-blocking
    (O_NONBLOCK, set by a process that shares the pipe) and its pipe full for now, the write waits
    for the reader to take some, as on a blocking one. (A hunt: Python's own stdout lost the output
    in silence under PYTHONUNBUFFERED, status 0, and else failed it as "Resource temporarily
    unavailable", status 4: a slow reader is no fault.) The descriptor stays open when it is closed."""

    def __init__(self, fd: int):
        super().__init__()
        self._fd = fd

    def writable(self):
        return True

    def fileno(self):
        return self._fd

    def isatty(self):
        return os.isatty(self._fd)

    def write(self, data):
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            try:
                done += os.write(self._fd, view[done:])
            except BlockingIOError:
                select.select([], [self._fd], [])       # a reader gone: writable, and the write's EPIPE says so
        return done


def _patient(stream):
    """`stream` (sys.stdout) as a text stream of the same encoding, errors and buffering over a
    `_PatientWriter` of its descriptor, where it is Python's own stdout; else `stream` itself (a
    caller's: a test's StringIO, a notebook's, a file of theirs, whose descriptor may not be theirs
    to write: a gzip file's)."""
    if stream is not sys.__stdout__:
        return stream
    try:
        fd = stream.fileno()
        kept = {"encoding": stream.encoding, "errors": stream.errors, "line_buffering": stream.line_buffering,
                "write_through": stream.write_through}
        stream.flush()
    except (AttributeError, OSError, ValueError):      # (io.UnsupportedOperation is both)
        return stream
    raw = _PatientWriter(fd)
    return io.TextIOWrapper(raw if kept["write_through"] else io.BufferedWriter(raw), **kept)


def shown(text: str) -> str:
    """`text` with each character a terminal would act on instead of showing (a carriage return,
    a Unicode line break, the ESC of an escape sequence, a format character) or that stands for
    a byte that is not UTF-8 written as its escape (`escaped`); line feeds and tabs are kept."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else escaped(c) for c in text)


def escaped(c: str) -> str:
    """The escape of character `c`: `\\x1b`, `\\r`, `\\u2028`; a byte of a name that is not UTF-8,
    held by Python as a surrogate (U+DC80-U+DCFF), as that byte, `\\xff`, as `ls -b` and bash's
    $'...' write it (a hunt: `\\udcff` names no byte; under an ASCII locale, PYTHONUTF8=0 LC_ALL=C,
    a folder 'é' was shown as `\\udcc3\\udca9`)."""
    code = ord(c)
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else ascii(c)[1:-1]


def shell_word(text: str) -> str:
    """`text` as one word of a shell command that a sentence shows as it is (`printable`): quoted
    (`shlex.quote`), or, where it holds what `shown` escapes or a line feed, in bash's $'...' with
    those escapes, which bash reads back as the same bytes (a hunt: a resume hint of
    `'\\xff.ck'`, the escape inside plain quotes, named another file)."""
    if text.isprintable():
        return shlex.quote(text)
    return "$'" + "".join(escaped(c) if not c.isprintable() else "\\" + c if c in "\\'" else c for c in text) + "'"


def _escape_unencodable(error):
    """Codec error handler "nbsymple.escape": what a stream's encoding cannot write, `escaped`."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "".join(map(escaped, error.object[error.start:error.end])), error.end


codecs.register_error("nbsymple.escape", _escape_unencodable)


def sentence(text: str) -> str:
    """`text` as one line on stderr: a line feed in it (user text: an argument, an environment
    value, a name read from a file) written as its escape, so that it cannot start a line that
    looks like a sentence of its own; `shown` escapes the other control characters."""
    return text.replace("\n", "\\n")


def printable(text) -> str:
    """User text (a path, a variable's value) as one line of what it holds, for stdout: `shown`,
    and a line feed as its escape (`sentence`). A hunt: `cpu-asm --keep DIR` and `info`'s OpenMP
    settings wrote an escape sequence raw, which cleared or recoloured the terminal."""
    return sentence(shown(str(text)))


class _LossyStream:
    """stderr as the command writes to it: where it cannot be written (a full disk, EIO), what
    goes to it is lost, as on a closed one, and the command goes on (its status tells): a run
    with `--progress` into `2>/dev/full` stopped at its first progress line."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        try:
            return self.stream.write(text)
        except BlockingIOError:          # a non-blocking stderr, full for now: this text lost, not the stream
            return len(text)
        except OSError:
            _send_nowhere(self.stream)
            return len(text)
        except ValueError:               # closed in Python (a caller's `sys.stderr = closed file`): lost
            return len(text)

    def flush(self):
        try:
            self.stream.flush()
        except (BlockingIOError, ValueError):
            pass
        except OSError:
            _send_nowhere(self.stream)

    def __getattr__(self, name):
        return getattr(self.stream, name)


class _ShownStderr(_LossyStream):
    """sys.stderr while a command runs: what it writes goes through `shown`, so that user text
    in a sentence (a path, an argument: `nbsymple run --ics $'x\\ry'`) can neither break it into
    lines nor redraw the terminal; `unescaped` is the stream without that, for the progress
    line's own redraws (runs/progress.py). Both lose what cannot be written (`_LossyStream`)."""

    def __init__(self, stream):
        super().__init__(stream)
        self.unescaped = _LossyStream(stream)

    def write(self, text):
        return self.unescaped.write(shown(text))


_STOPS: list[int] = []        # the signals that stopped the command under way (`command`)
_CONTINUED: list[int] = []    # its SIGCONTs: each ended a stop (Ctrl-Z, SIGSTOP, a batch system's suspend)


def _fill_closed_descriptors():
    """/dev/null on each of the descriptors 0, 1, 2 that is closed, so that a file opened later
    never takes one of them (a checkpoint on descriptor 2 would get what a library or a child
    writes to stderr)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def _status_of_children():
    """SIGCHLD back to its default where the process was started ignoring it (a launcher's or a
    daemon's SIG_IGN, kept across exec): the kernel then reaps each child as it ends, and Python's
    subprocess reads its status as 0, a child that failed as one that passed (a hunt: the check of
    MPI's start passed MPIR_CVAR_CH4_NETMOD=garbage, and asv's failures read as success)."""
    if signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)


def _unblock_answered():
    """Unblock the signals `command` answers (HELD, and SIGCONT, which it counts) where the process
    was started blocking them (a signal mask that a launcher's thread leaked across exec): never
    delivered, a SIGTERM left a checkpointed run stepping until the batch system's SIGKILL (a hunt).
    One the process was started ignoring stays ignored: that is how a launcher asks for it (nohup)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {*HELD, signal.SIGCONT})


def repeated(signum: int, caught) -> bool:
    """Whether `signum` repeats a SIGXCPU among the signals `caught`: the kernel's, every CPU
    second past the soft limit, not the user's second signal (which stops at once)."""
    return signum == signal.SIGXCPU and signum in caught


def raise_terminated(signum, frame):
    """`command`'s handler of the TERMINATING signals: `Terminated` in the main thread (a repeat of
    SIGXCPU's is no second signal)."""
    if repeated(signum, _STOPS):
        return
    _STOPS.append(signum)
    raise Terminated(signum)


def stopped_and_continued() -> int:
    """How often the command under way was stopped and continued (`command` counts the SIGCONTs):
    its wall-clock times include the time it stood still, which what reports them says."""
    return len(_CONTINUED)


def stood_still(n: int | None = None) -> str | None:
    """Where the command under way was stopped and continued (`stopped_and_continued`, or `n`
    times: a run's count over its sessions), the words said beside the times it reports
    ("stopped and continued 2 times: its times include the time it stood still"), else None."""
    n = len(_CONTINUED) if n is None else n
    return f"stopped and continued {n} time{'s' * (n > 1)}: its times include the time it stood still" if n else None


def _raise_interrupt(signum, frame):
    _STOPS.append(signum)
    raise KeyboardInterrupt


def _unraisable(hook):
    """sys.unraisablehook that leaves out the interrupts raised where Python cannot pass them on
    (a callback from C, such as numba's compiler's, a weakref's or a `__del__`): `command` ends
    the command for them once its body returns, and a long command asks `stop_pending` between
    its parts; anything else goes to `hook`."""
    def quiet(unraisable):
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            hook(unraisable)
    return quiet


def stop_pending():
    """Raise, now, the stop of a signal that was swallowed where Python could not pass it on
    (`_unraisable`): for a command of several long parts, between them (a hunt: a SIGTERM in a
    weakref's callback let `paper` run its next science run whole, and draw everything)."""
    if _STOPS:
        raise KeyboardInterrupt if _STOPS[0] == signal.SIGINT else Terminated(_STOPS[0])


@contextmanager
def signals_held():
    """Hold SIGINT and the signals of TERMINATING until the end of the block, then deliver the first one
    caught: for what must not be split, such as starting a child and recording it (so that the
    `finally` that ends the children knows it). Only in the main thread; elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    previous = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum)) for sig in HELD}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


@contextmanager
def child_process(cmd, **popen):
    """`subprocess.Popen(cmd, **popen)` in a process group of its own, for the `with` block.
    Should the block end by an exception (`Terminated`, Ctrl-C, an error), the whole group, the
    child's own children too, is ended with it: SIGTERM, then SIGKILL after `GRACE` seconds.
    Otherwise the block's end waits for the child, as Popen's own `with` does. Should the command
    be killed (`kill -9`, no exception), the child gets SIGTERM (`_ends_with_parent`)."""
    proc = None
    try:
        with signals_held():             # started and recorded, or not started
            proc = subprocess.Popen(cmd, start_new_session=True, preexec_fn=_ends_with_parent(), **popen)
        yield proc
    except BaseException:
        if proc is not None:
            _end_group(proc)
        raise
    finally:
        if proc is not None:
            with proc:                   # close its pipes and reap it
                pass


PR_SET_PDEATHSIG = 1                 # Linux's prctl: the signal a process gets when its parent ends


def _ends_with_parent():
    """A Popen `preexec_fn` by which the child gets SIGTERM when this process ends, killed too
    (`kill -9` of `make bench` left asv measuring and writing results/ after its lock was gone, a
    hunt; a second `make bench` then ran beside it), or None where the system has no such call
    (Linux's alone). Linux sends it when the thread that started the child ends: `child_process`
    waits for its child in that thread."""
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def in_child():
        signal.signal(signal.SIGTERM, signal.SIG_DFL)      # not `signals_held`' catcher before the exec
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:       # ended before the call: no signal will come
            os.kill(os.getpid(), signal.SIGTERM)
    return in_child


def _end_group(proc):
    for sig, wait in ((signal.SIGTERM, GRACE), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass


def _say(text: str):
    if sys.stderr is None:               # closed at the start: lost, never printed to stdout instead
        return
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):        # stderr is gone too: the status alone tells
        pass


def speaks() -> bool:
    """False on the ranks other than 0 of an MPI job (a valid rank above 0), which leave the
    talking to rank 0: a refusal is printed once, not once per rank. A process no launcher
    started (`core.ranks.launcher_present`) speaks whatever rank variables it inherited."""
    from .core.ranks import launcher_present, whole_value
    if not launcher_present():
        return True
    for rank, size in (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMIX_RANK", "")):
        r, n = whole_value(os.environ.get(rank)), whole_value(os.environ.get(size))
        if r is not None and r > 0 and (n is None or r < n):
            return False
    return True


def command(name: str, body, draws: bool = False, ranks: bool = False) -> int:
    """Run `body()` (which imports what the command needs) as command `name` (`nbsymple run`):
    the environment checked first (`draws`: the command draws with matplotlib; unless `ranks`,
    the command runs in one process, and an MPI launcher of several is refused), stdout guarded,
    the signals of TERMINATING turned into `Terminated`; returns the exit status."""
    _fill_closed_descriptors()
    escape_undecodable()
    handlers, unraisablehook = {}, sys.unraisablehook
    if threading.current_thread() is threading.main_thread():
        _status_of_children()
        # only over the defaults: a signal the process was started ignoring stays ignored, and one
        # held already (`runs.signals.hold_signals`, F's ranks before they are joined) stays held
        handlers = {sig: signal.signal(sig, raise_terminated) for sig in TERMINATING
                    if signal.getsignal(sig) is signal.SIG_DFL}
        if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, loading.leave):   # (its modules loaded)
            handlers[signal.SIGINT] = signal.signal(signal.SIGINT, _raise_interrupt)
        handlers[signal.SIGCONT] = signal.signal(signal.SIGCONT, lambda signum, frame: _CONTINUED.append(signum))
    handlers_taken = set(handlers)       # (`_restore` empties `handlers`)
    sys.unraisablehook = _unraisable(unraisablehook)
    _STOPS.clear()
    _CONTINUED.clear()
    original = patient = sys.stdout
    try:
        # the check starts children for seconds (MPI's start, numba's threads): a stop there is said too, and
        # so is one pending while the signals were blocked, delivered as the mask opens
        try:
            if threading.current_thread() is threading.main_thread():
                _unblock_answered()
            found = environment.process_problem() or environment.problem(draws=draws)
            if found is None and not ranks:
                from .core.ranks import one_process_problem
                found = one_process_problem("this command")
            stop_pending()
        except KeyboardInterrupt as e:   # (a hunt: a Ctrl-C there was KeyboardInterrupt's traceback)
            return _stopped_before_start(name, getattr(e, "signum", signal.SIGINT), ranks, handlers)
        if found is not None:
            _restore(handlers)           # as before any was answered: a rank refused ends as the job expects
            if speaks():
                _say(sentence(f"{name}: {found}"))
            from .core.ranks import launcher_rank, launcher_size
            if ranks and launcher_size() > 1 and not isinstance(found, environment.MpiProblem):   # the other
                # ranks may have passed and wait for this one in MPI_Init (MPI that cannot start here is joined by none)
                try:
                    from .mpi.comm import refuse_the_job
                except Exception:   # noqa: BLE001 - NumPy cannot load within these limits: this rank ends alone
                    return USAGE
                refuse_the_job(lambda: _say(sentence(f"{name}: rank {launcher_rank()}: {found}")), USAGE)
            return USAGE
        _CONTINUED.clear()               # a stop during the check is in no time the command reports
        patient = _patient(original) if original is not None else None
        with _signal_watch():
            return _guarded(name, body, original, patient)
    finally:
        _STOPS.clear()                   # the command's own: `stop_pending` outside one sees none (a test
        sys.unraisablehook = unraisablehook      # calling `paper.main` after another command's signal was stopped)
        _restore(handlers)
        if signal.SIGXCPU in handlers_taken:
            atexit.unregister(_ignore_cpu_limit)     # the last registered runs first: before numba's, matplotlib's
            atexit.register(_ignore_cpu_limit)
        if patient is not original:
            _flush_or_drop(patient, original)


@contextmanager
def _signal_watch():
    """Under Python 3.11, a thread that wakes every SIGNAL_WATCH_S for the length of the block. A
    signal whose C handler runs on a thread other than the main one (one of OpenBLAS's or numba's,
    where the kernel delivers it while the main thread has one pending: SIGTERM then SIGCONT) is
    marked pending without waking the main thread's interpreter (`_PyEval_SignalReceived` asks, on
    the thread that caught it, whether that thread can handle signals: it cannot), whose loop then
    runs on without calling the handler (a hunt: `timeout` did not stop a run in 6 of 10 tries).
    A thread that takes the GIL makes the main thread look at its pending signals. Python 3.12
    wakes it itself."""
    if sys.version_info >= (3, 12) or threading.current_thread() is not threading.main_thread():
        yield
        return
    done = threading.Event()

    def wake():
        while not done.wait(SIGNAL_WATCH_S):       # each return takes the GIL
            pass
    threading.Thread(target=wake, name="nbsymple-signal-watch", daemon=True).start()
    try:
        yield
    finally:
        done.set()


def _ignore_cpu_limit():
    """At the interpreter's exit, after a command: a CPU-time limit's SIGXCPU (sent every CPU second
    past the soft limit) ignored, where `command` answered it: by default it ends the process with a
    core dump, after the command's work was done and said (a hunt: `paper`'s "wrote 11 files", then
    status -24 and a core of 276 MB). The hard limit's SIGKILL still ends the process."""
    if signal.getsignal(signal.SIGXCPU) is signal.SIG_DFL:
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)


def _restore(handlers: dict):
    """Put back the signal handlers `command` replaced (once: the dict is emptied)."""
    while handlers:
        sig, handler = handlers.popitem()
        signal.signal(sig, handler)


def _stopped_before_start(name: str, signum: int, ranks: bool, handlers: dict) -> int:
    """The status of a command stopped by `signum` while its environment was checked, said in one
    sentence. A rank of several under an MPI launcher ends by the signal itself, as it would have
    before the command answered signals: one that ended by a status, before MPI_Init, would leave
    the others waiting there."""
    _restore(handlers)
    if speaks():
        _say(f"{name}: stopped by {signal.Signals(signum).name}")
    from .core.ranks import launcher_size
    if ranks and launcher_size() > 1:
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)
    return 128 + signum


def _guarded(name: str, body, original, patient) -> int:
    """`command`'s run of `body()`, its checks passed: stdout guarded (over `patient`, Python's
    `original` one made to wait for a slow reader), stderr shown, its errors said in one sentence."""
    original_err = sys.stderr
    sys.stdout = _GuardedStdout(patient)
    if original_err is None:             # closed at the start: print(file=None) would write to stdout
        sys.stderr = open(os.devnull, "w")
    else:
        sys.stderr = _ShownStderr(original_err)
    try:
        status = body()
        sys.stdout.flush()
        if _STOPS and status != 128 + _STOPS[0]:     # a signal whose exception was swallowed on its way
            raise Terminated(_STOPS[0])
        return status
    except OutputFailed as e:
        _send_nowhere(original)
        if e.errno == errno.EPIPE:
            return BROKEN_PIPE
        notes = "".join(f"; {note}" for note in getattr(e, "__notes__", ()))
        _say(f"{name}: cannot write its output to stdout: {e}{notes}")
        return FAULT
    except BrokenPipeError:              # a write to the stdout file descriptor outside sys.stdout
        _send_nowhere(original)
        return BROKEN_PIPE
    except OSError as e:
        if e.errno in (errno.EMFILE, errno.ENFILE):
            _say(sentence(f"{name}: {_out_of_files(e)}"))
            return FAULT
        if (path := environment.failed_write(e)) is not None:    # a full disk, a folder made read-only:
            _say(cannot_write(name, path, e))         # a traceback from the tools before (a hunt)
            return FAULT
        if e.errno in WRITE_FAULTS:      # a write of no output file: a temporary one (a hunt: TMPDIR on a full disk)
            _say(sentence(f"{name}: {_write_fault(e)}"))
            return FAULT
        if (status := _said_late(name)) is None:
            raise
        return status
    except MemoryError:                  # work is checked against the memory before it starts: a limit met later
        _say(f"{name}: ran out of memory: {work.out_of_memory()}")
        return FAULT
    except KeyboardInterrupt as e:       # SIGINT (Ctrl-C), or Terminated
        signum = getattr(e, "signum", signal.SIGINT)
        if speaks():
            _say(f"{name}: stopped by {signal.Signals(signum).name}")
        return 128 + signum
    except Exception:
        if (status := _said_late(name)) is None:
            raise
        return status
    finally:
        if original_err is None:
            sys.stderr.close()
        sys.stdout, sys.stderr = original, original_err


def _flush_or_drop(patient, original):
    """Write what a command that stopped left buffered on stdout (`patient`), as Python's own
    stdout does at exit; where it cannot be written, or a Ctrl-C ends the wait for a slow reader,
    send it nowhere, so that closing the stream later does not fail again."""
    try:
        patient.flush()
    except (OSError, ValueError, KeyboardInterrupt):
        _send_nowhere(original)
        with contextlib.suppress(OSError, ValueError):
            patient.flush()


def cannot_write(name: str, path, error: OSError) -> str:
    """The sentence of command `name` whose atomic write of `path` failed with `error` (a full
    disk, a folder made read-only): what was there is left as it was."""
    return sentence(f"{name}: cannot write {path}: {environment.os_reason(error)}; the file there before, if any, "
                    f"is left as it was")


# a write the machine refused: a full disk or quota, a read-only file system, a device error, `ulimit -f`
WRITE_FAULTS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EFBIG)


def _write_fault(error: OSError) -> str:
    """What a write the machine refused (WRITE_FAULTS) outside a command's own files was: the
    file where the error names one, and the folder of temporary files, where the tools write the
    rest (the compilers' input and output, llvm-mca's loop)."""
    import tempfile
    what = f"cannot write {error.filename}" if error.filename else "a write failed"
    return f"{what}: {environment.os_reason(error)} (temporary files go to {tempfile.gettempdir()}: TMPDIR)"


def _said_late(name: str) -> int | None:
    """The status of an error that escaped the command's body for a reason said here in one
    sentence, else None (a traceback): a signal lost in a callback from C, whose error after it
    (numba's "no compiled object yet") is the stop; the current folder removed while the command
    ran (at its start it is refused, class 12). Both found by a hunt."""
    if _STOPS:
        if speaks():
            _say(f"{name}: stopped by {signal.Signals(_STOPS[0]).name}")
        return 128 + _STOPS[0]
    if (gone := environment.process_problem()) is not None and gone.startswith("the current folder"):
        _say(f"{name}: {gone}")
        return FAULT
    return None


def escape_undecodable():
    """Let stdout and stderr write what their encoding cannot (a path's undecodable bytes, held
    as surrogates; an em dash under a Latin-1 or ASCII locale: `peers` failed after all its
    measuring, a hunt) as their escapes (`escaped`) instead of failing; a stream without
    `reconfigure` (a test's StringIO) is left as it is."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="nbsymple.escape")
            except (OSError, ValueError):
                pass


def _out_of_files(e: OSError) -> str:
    """What to do where a file could not be opened for want of descriptors: this process's limit
    (EMFILE, `ulimit -n`, at least `environment.OPEN_FILES` at the start) or the system's (ENFILE)."""
    if e.errno == errno.ENFILE:
        return (f"the system's table of open files is full ({e}); run the command again once other programs have "
                f"closed some")
    import resource
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return (f"this process ran out of open files ({e}; ulimit -n {limit}); raise the limit and run the command "
            f"again")


def _send_nowhere(stream):
    """After a failed write: send what is still buffered for the standard stream `stream`, and
    what comes later, nowhere (its descriptor onto /dev/null), so that the interpreter's final
    flush does not fail again (printing 'Exception ignored', or exiting with 120)."""
    if stream is None:                   # closed from the start: nothing buffered
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):   # no file (a test's StringIO): nothing is buffered
        pass
