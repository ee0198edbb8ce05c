"""JSONL imports in bounded memory, on several cores: the file is cut into chunks that are read, checked and prepared
one by one (in worker processes when there are cores to spare), and written in file order by the caller.

A chunk (a byte range ending after a newline) is hashed line by line first: a line the project already holds
verbatim (app.store.bulk line hashes) is not parsed at all. The other lines are parsed, validated and turned into
store rows. Workers are long-lived `python -m app.io.parallel` processes (fresh interpreters, so this is safe next to
Qt threads; not multiprocessing, whose spawn mode re-runs the caller's main script), fed pickled chunks on stdin and
answering on stdout, at most two chunks ahead each, so memory stays bounded whatever the file's size. A worker that
fails for any reason is replaced by doing its chunk here, so the outcome never depends on the workers. While workers
run, the caller writes every chunk in one transaction, and at a million samples writing (~40 CPU-s) was the longest
serial path; parsing half the chunks beside it (as it did) made the caller's path ~85 CPU-s while the worker sat
idle half the time. So the caller does a chunk itself only when it would otherwise wait: the next answer it needs is
not there yet (`_ready`). Since writing got cheaper, at 100k samples a worker's chunk (~0.17 CPU-s) costs more
than writing it (~0.12): the caller, idle a third of the time, then takes the next chunk off the worker's queue (up
to TAKE_AHEAD done and waiting: the worker keeps a chunk queued meanwhile, so it never waits for the caller), in file
order. A worker's answers are read off its pipe by a thread as they come (`_Answers`), so the worker never waits for
the caller to read either (at 300k samples each process sat blocked 2-5 s of ~20 s on the other; now ~0.5 s).
"""
from __future__ import annotations

import gc
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections import Counter, deque
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from queue import SimpleQueue
from typing import Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

from app.io.formats import overlong_problem, parse_line, spanning_document
from app.io.problems import Location, Problem, Problems
from app.io.records import RecordValidator, Validated, ValidatorState, io_adapter
from app.store.bulk import LineHashReader, line_hashes
from calibration.jsontext import MAX_RECORD_BYTES, encoding_problem, field_at_end
from calibration.schemes.base import registry

PIPE_BYTES = 1 << 20  # a worker's answer pipe (the default Linux maximum for an unprivileged process)
MIN_PARALLEL_BYTES = 16 * 1024 * 1024  # below this, starting a process costs more than it saves
CHUNK_BYTES = 8 * 1024 * 1024  # ~4,000 typical records: small enough to bound memory, big enough to batch SQL
TAKE_WHEN_IDLE = True  # the caller does a chunk itself while the answer it waits for is not there yet (see above)
TAKE_AHEAD = 2  # chunks the caller may hold done (taken while it waited) before it writes them
SPANNING_LIMIT = 256 * 1024 * 1024  # a pretty-printed JSON document is looked for only in files up to this size
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Part:
    path: str
    start: int  # byte offsets into the file; the part ends after a newline (or at the end of the file)
    end: int
    first_line: int
    project: str | None  # project file whose line hashes to look up (None: it holds none)
    contexts: Mapping[str, Any]  # scheme -> what its io part read from the project (records.project_contexts)
    data: bytes | None = None  # the chunk's bytes when already read (the caller's own chunks); else read from path
    overlong: str | None = None  # the part is one line over MAX_RECORD_BYTES, not read: where it passes the limit
    pack: bool = False  # a first load (app.store.bulk.first_load): a worker sends its rows packed (`packed`)


@dataclass(frozen=True)
class Overlong:
    """What `chunks` yields instead of the bytes of a line over MAX_RECORD_BYTES: the field where it passes it."""

    field: str


@dataclass
class PartResult:
    errors: list[Problem]
    warnings: list[Problem]
    state: ValidatorState
    # scheme -> what its io adapter's `write_prepared` takes (e.g. the violations samples' store rows), made by the
    # adapter's `prepare` here, in the worker; empty once the chunk has errors (nothing more is written)
    prepared: dict[str, Any]
    facts: dict[str, Any] = field(default_factory=dict)  # scheme -> its io part's `facts` of the chunk's records
    records: int = 0
    lines: int = 0
    schemes: dict[str, str] = field(default_factory=dict)  # sample id -> scheme of every valid record parsed
    generic: dict[str, list[Any]] = field(default_factory=dict)  # records of schemes stored generically
    line_hashes: dict[str, bytes] = field(default_factory=dict)  # sample id -> raw line hash of records parsed
    unchanged: Counter[str] = field(default_factory=Counter)  # scheme -> lines skipped (already in the project)
    spanning: bool = False  # the file is one pretty-printed JSON document, or not UTF-8 (the only error to report)
    end: int = 0  # the chunk's end in the file (progress)


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def chunks(path: str | Path, size: int | None = None, hasher: Any = None,
           ) -> Iterator[tuple[int, int, int, "bytes | Overlong"]]:
    """(start, end, first line number, bytes) of consecutive ranges of about `size` bytes, cut after newlines; reads
    the file once, lazily, so the first chunks start at once. `hasher` (e.g. the dataset's sha256) is fed in a
    thread of its own: hashlib releases the GIL on large blocks, so on two cores it costs the import no time.
    A line longer than MAX_RECORD_BYTES is its own range, with an `Overlong` instead of its bytes: it is read past,
    never held whole."""
    size = size or CHUNK_BYTES
    start, line, carry = 0, 1, b""
    hashing: Future[None] | None = None
    with ThreadPoolExecutor(1) as pool, open(path, "rb") as fh:
        while True:
            block = fh.read(size)
            if hasher is not None and block:
                hashing = _hash(pool, hashing, hasher, block)
            if len(block) < size:  # the end of the file: the rest, whether or not it ends with a newline
                data = carry + block
                if len(data) > MAX_RECORD_BYTES and b"\n" not in data:
                    yield start, start + len(data), line, Overlong(field_at_end(data[:MAX_RECORD_BYTES]))
                elif data:
                    yield start, start + len(data), line, data
                return
            cut = block.rfind(b"\n")
            if cut < 0:
                carry += block
                if len(carry) > MAX_RECORD_BYTES:  # (a carry holds no newline)
                    over, length, carry = Overlong(field_at_end(carry[:MAX_RECORD_BYTES])), len(carry), b""
                    rest: bytes | None = None
                    while True:  # read past the rest of the line
                        block = fh.read(size)
                        if hasher is not None and block:
                            hashing = _hash(pool, hashing, hasher, block)
                        nl = block.find(b"\n")
                        if nl >= 0:
                            length, rest = length + nl + 1, block[nl + 1:]
                            break
                        length += len(block)
                        if len(block) < size:
                            break
                    yield start, start + length, line, over
                    start, line = start + length, line + 1
                    if rest is None:
                        return
                    cut = rest.rfind(b"\n")
                    if cut >= 0:
                        data, rest = rest[: cut + 1], rest[cut + 1:]
                        yield start, start + len(data), line, data
                        start, line = start + len(data), line + data.count(b"\n")
                    if len(block) < size:  # the end of the file
                        if rest:
                            yield start, start + len(rest), line, rest
                        return
                    carry = rest
                continue
            data = b"".join((carry, memoryview(block)[: cut + 1]))  # (one copy: a slice, then +, made two)
            carry = block[cut + 1 :]
            yield start, start + len(data), line, data
            start, line = start + len(data), line + data.count(b"\n")


def _hash(pool: ThreadPoolExecutor, previous: "Future[None] | None", hasher: Any, block: bytes) -> "Future[None]":
    """Hash `block` in the pool once the previous block is hashed: one block waits, never the whole file (reading
    past an over-long line outruns a loaded hasher)."""
    if previous is not None:
        previous.result()
    return pool.submit(hasher.update, block)


def run_part(part: Part, reader: LineHashReader | None = None) -> PartResult:
    """Hash, parse, validate and prepare one chunk (in a worker process, or in the caller)."""
    if part.overlong is not None:
        problems = Problems()
        problems.error(Location(part.path, part.first_line), "", overlong_problem(part.overlong))
        return PartResult(problems.errors, [], RecordValidator(problems).state(), {}, {}, 0, 1, end=part.end)
    data = part.data
    if data is None:
        with open(part.path, "rb") as fh:
            fh.seek(part.start)
            data = fh.read(part.end - part.start)
    if part.start == 0 and data.startswith(BOM):
        data = data[3:]
    problems = Problems()
    validator = RecordValidator(problems, part.contexts, file=part.path)
    unreadable = encoding_problem(data[:4]) if part.start == 0 else None
    if unreadable is not None:  # (e.g. UTF-16: one problem for the file, not one per line; the rest is not read)
        problems.error(Location(part.path, None), "", unreadable)
        return PartResult(problems.errors, [], validator.state(), {}, lines=1, spanning=True, end=part.end)
    # a line of blanks only is skipped (isspace: no copy of the line, as strip() would make)
    numbered = [(n, raw) for n, raw in enumerate(data.split(b"\n"), part.first_line) if raw and not raw.isspace()]
    del data
    hashes = line_hashes([raw for _, raw in numbered])
    known: Mapping[bytes, tuple[str, str]] = {}
    if part.project is not None:
        own = reader is None
        reader = reader or LineHashReader(part.project)
        try:
            known = reader.known(hashes)
        finally:
            if own:
                reader.close()
    skipped: list[str] = []  # the scheme of each line skipped
    line_of: dict[int, bytes] = {}
    records = 0
    path, get, add_unchanged = part.path, known.get, validator.add_unchanged
    for (number, raw), h in zip(numbered, hashes):
        hit = get(h)
        if hit is not None:  # the project holds this very line: no need to parse it
            add_unchanged(number, hit[0])
            skipped.append(hit[1])
            continue
        if len(raw) > MAX_RECORD_BYTES:  # (a chunk may end up to one block past the limit)
            problems.error(Location(path, number), "", overlong_problem(field_at_end(raw[:MAX_RECORD_BYTES])))
            continue
        rec = parse_line(raw, part.path, number, problems)
        if rec is not None:
            records += 1
            line_of[number] = h
            validator.add(rec.location, rec.data)
    records += len(skipped)
    unchanged = Counter(skipped)
    spanning = part.start == 0 and bool(problems.errors) and _spanning(part, problems)
    out = validator.out
    state = validator.state()
    ids = state.ids  # (line numbers: every location here is a line of part.path)
    hash_of = {sid: line_of[n] for sid in out.schemes if type(n := ids.get(sid)) is int and n in line_of}
    return PartResult(
        problems.errors, problems.warnings, state, {} if problems.errors else prepared_rows(out, hash_of),
        import_facts(out), records, len(numbered), schemes=out.schemes, generic=out.records, line_hashes=hash_of, unchanged=unchanged,
        spanning=spanning, end=part.end)


def packed(result: PartResult) -> PartResult:
    """A worker's result for a first load: each scheme's rows in the form its io part's `pack` makes (the violations:
    one SQLite image the writer copies in C); the caller's own chunks are written as prepared (packing them would
    only add work on its path)."""
    for name, rows in result.prepared.items():
        pack = io_adapter(name).pack
        if pack is not None:
            result.prepared[name] = pack(rows)
    return result


def prepared_rows(out: Validated, line_hashes: Mapping[str, bytes]) -> dict[str, Any]:
    """Per scheme of the chunk's valid records whose io adapter has `prepare` (app/schemes/contracts.py): what it writes."""
    prepared: dict[str, Any] = {}
    present = set(out.schemes.values())
    for name in [n for n in registry().names() if n in present]:  # registry order, as a whole-file import writes
        prepare = io_adapter(name).prepare
        if prepare is not None:
            prepared[name] = prepare(out, line_hashes)
    return prepared


def import_facts(out: Validated) -> dict[str, Any]:
    """Per scheme of the valid records whose io part has `facts`: what the import summary says of them."""
    found: dict[str, Any] = {}
    present = set(out.schemes.values())
    for name in [n for n in registry().names() if n in present]:
        hook = io_adapter(name).facts
        if hook is not None:
            found[name] = hook(out.own.get(name))
    return found


def _spanning(part: Part, problems: Problems) -> bool:
    """The first chunk failed: the file may be one pretty-printed JSON document (say so, once)."""
    if os.path.getsize(part.path) > SPANNING_LIMIT:
        return False
    data = Path(part.path).read_bytes()
    if data.startswith(BOM):
        data = data[3:]
    return spanning_document(data, problems, part.path, 0)


class Pipeline:
    """Chunks in, results out in file order. Worker processes take up to `ahead` chunks each, so at most `ahead` x
    workers chunks are in flight and memory stays bounded; the caller does a chunk only when no worker runs (before
    they start, or after they failed). Workers start once a chunk needed parsing: a re-import of an unchanged file
    (every line known by its hash) is done here without them. Without a `reader` (the project holds no line hashes,
    e.g. a first import) every line will be parsed: they start at once, so their start-up (a fresh interpreter
    importing the schemes, ~0.5 CPU-s) overlaps the caller doing the first chunk instead of delaying the second."""

    def __init__(self, parts: Iterator[Part], workers: int, reader: LineHashReader | None = None, ahead: int = 2) -> None:
        self.parts = parts
        self.workers = workers
        self.procs: list[subprocess.Popen[bytes]] = []
        self.answers: dict[int, _Answers] = {}  # worker pid -> its answers, read as they come
        self.reader = reader
        self.ahead = ahead
        self.cap = 1  # the first chunk alone, here: it tells whether workers are worth starting
        # entries in file order: [part, worker process or None (the caller's), result or None]
        self.pending: deque[list[Any]] = deque()
        self.busy: Counter[int] = Counter()  # chunks sent to each worker and not yet read back
        self.local_first = False  # the first chunk is the caller's even though workers already run
        self.taken = 0  # chunks the caller took while it waited, done and not yet yielded (beyond `cap`; at most 1)
        if reader is None and workers:
            self.local_first = True
            self._spawn()

    def __iter__(self) -> Iterator[PartResult]:
        try:
            while True:
                self._fill()
                if not self.pending:
                    return
                entry = self.pending.popleft()
                if entry[1] is None and entry[2] is not None:
                    self.taken -= 1
                result = self._result(entry)
                if self.workers and result.records > sum(result.unchanged.values()):
                    self._spawn()
                yield result
        finally:
            self.close()

    def _spawn(self) -> None:
        self.procs = [_start() for _ in range(self.workers)]
        self.answers = {p.pid: _Answers(p.stdout) for p in self.procs}
        self.cap, self.workers = self.ahead * len(self.procs) + self.local_first, 0

    def _fill(self) -> None:
        while len(self.pending) - self.taken < self.cap:
            if self.local_first:  # the caller's own first chunk, done while the workers start
                part = next(self.parts, None)
                if part is None:
                    return
                self.local_first = False
                self.pending.append([part, None, None])
                continue
            proc = next((p for p in self.procs if self.busy[p.pid] < self.ahead and p.poll() is None), None)
            if proc is None and any(p.poll() is None for p in self.procs):
                return  # every running worker has its chunks: the next one waits for the first to free up
            part = next(self.parts, None)
            if part is None:
                return
            if proc is not None:
                try:
                    part = replace(part, data=None)  # the worker reads its chunk from the file
                    _send(proc.stdin, part)
                    self.busy[proc.pid] += 1
                except OSError:
                    proc = None
            self.pending.append([part, proc, None])

    def _result(self, entry: list[Any]) -> PartResult:
        part, proc, result = entry
        if result is not None:
            return result
        if proc is not None:
            answers = self.answers[proc.pid]
            while self.taken < TAKE_AHEAD and not _ready(answers) and self._take():
                pass  # (the worker's next chunk is queued meanwhile, so it never waits for the caller)
            self.busy[proc.pid] -= 1
            try:
                out = answers.next()
                if out is not None:
                    return out
            except (OSError, EOFError, pickle.UnpicklingError, struct.error):
                pass
            self._drop(proc)
        return run_part(part, self.reader)

    def _take(self) -> bool:
        """Do the next chunk here, now (the caller is waiting for a worker's answer): it joins the queue in file
        order, done. False at the end of the file, or when the caller does every chunk anyway."""
        if not TAKE_WHEN_IDLE or not self.procs:
            return False
        part = next(self.parts, None)
        if part is None:
            return False
        self.pending.append([part, None, run_part(part, self.reader)])
        self.taken += 1
        return True

    def _drop(self, proc: subprocess.Popen[bytes]) -> None:
        """A worker that failed: its chunks are redone here, and it gets no more."""
        for entry in self.pending:
            if entry[1] is proc:
                entry[1] = None
        if proc in self.procs:
            self.procs.remove(proc)
        if proc.poll() is None:
            proc.kill()
        proc.wait()

    def close(self) -> None:
        for proc in self.procs:
            try:
                if proc.stdin is not None and not proc.stdin.closed:
                    proc.stdin.close()
            except OSError:
                pass
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        for answers in self.answers.values():
            answers.thread.join()  # (its worker is gone: the pipe is at its end)
        self.procs, self.answers = [], {}


def _send(fh: Any, obj: Any) -> None:
    assert fh is not None
    data = memoryview(struct.pack("<Q", len(obj := pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))) + obj)
    while data:  # an unbuffered pipe may take part of a write
        n = fh.write(data)
        data = data[n if n is not None else len(data):]
    fh.flush()


class _Answers:
    """A worker's answers, read off its pipe by a thread of their own as soon as they come (the read and its copy
    release the GIL). Read by the caller instead, an answer (a first load's SQLite image, ~9 MB a chunk; the pipe
    holds 1 MB) kept the worker blocked on its write while the caller did a chunk of its own: each waited on the other
    in turn (at 300k samples the worker sat blocked ~2 s and the caller ~3.5 s). Memory stays bounded: a worker
    answers only the chunks it was sent, at most `Pipeline.ahead` not yet taken."""

    def __init__(self, fh: Any) -> None:
        self._queue: SimpleQueue[bytearray | None] = SimpleQueue()
        self.thread = threading.Thread(target=self._run, args=(fh,), name="import-answers", daemon=True)
        self.thread.start()

    def _run(self, fh: Any) -> None:
        try:
            while (data := _receive_bytes(fh)) is not None:
                self._queue.put(data)
        except Exception:  # (any failure: the caller redoes the worker's chunks, as for a worker gone)
            pass
        finally:
            self._queue.put(None)  # the end: the worker is gone (or its pipe failed)

    def ready(self) -> bool:
        """Whether the next answer is here (or the worker is gone): taking it would not wait for the worker."""
        return not self._queue.empty()

    def next(self) -> Any:
        """The next answer (waiting for it), None once the worker is gone; raises what unpickling raises."""
        data = self._queue.get()
        if data is None:
            self._queue.put(None)  # (every later call sees the end too)
            return None
        return pickle.loads(data)


def _ready(answers: _Answers) -> bool:
    """Whether a worker's next answer has arrived (or the worker is gone): taking it would not wait for the worker to
    parse."""
    return answers.ready()


def _read(fh: Any, n: int) -> bytearray:
    """Exactly n bytes (fewer only at the end of the stream).
    Read into one buffer of the answer's size (a first load's answers hold SQLite images, ~1.7 GB at 1M samples:
    no growing buffer and no copy of it)."""
    out = bytearray(n)
    got = 0
    with memoryview(out) as view:
        while got < n:
            k = fh.readinto(view[got:])
            if not k:
                break
            got += k
    return out if got == n else out[:got]


def _receive_bytes(fh: Any) -> bytearray | None:
    """The next message's pickled bytes, None at the end of the stream."""
    assert fh is not None
    head = _read(fh, 8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    data = _read(fh, n)
    return data if len(data) == n else None


def _receive(fh: Any) -> Any:
    data = _receive_bytes(fh)
    return None if data is None else pickle.loads(data)


def _start() -> subprocess.Popen[bytes]:
    root = str(Path(__file__).resolve().parents[2])  # the directory holding the `app` package
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    # -P: not the current directory first on sys.path, where another `app` package (any project's) would win
    proc = subprocess.Popen([sys.executable, "-P", "-m", "app.io.parallel"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0)
    _widen(proc.stdout)
    return proc


def _widen(pipe: Any) -> None:
    """A 1 MB pipe buffer where the OS allows it (Linux): a chunk's answer (~3 MB) then crosses in a few reads, not
    ~50 of the default 64 KB, each a handoff that waits for both processes to be scheduled on a loaded machine."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None or pipe is None:
        return
    try:
        fcntl.fcntl(pipe.fileno(), set_size, PIPE_BYTES)
    except OSError:  # over the user's pipe quota or the system's maximum: the default size still works
        pass


def _worker() -> None:
    """Entry point of a worker process: pickled Parts on stdin, their pickled PartResults on stdout, until EOF."""
    gc.disable()  # see app.io.imports: nothing here builds cycles
    readers: dict[str, LineHashReader] = {}
    while True:
        part = _receive(sys.stdin.buffer)
        if part is None:
            break
        reader = None
        if part.project is not None:
            reader = readers.get(part.project) or readers.setdefault(part.project, LineHashReader(part.project))
        result = run_part(part, reader)
        _send(sys.stdout.buffer, packed(result) if part.pack else result)
    for r in readers.values():
        r.close()


if __name__ == "__main__":
    from app.io.parallel import _worker as worker  # the importable module, so results unpickle as its classes

    worker()
