"""writebench's Python runner (`--runtimes python`).

It writes the parts writebench hands it from the source memfd on fd 3 and times them;
writebench prepares the files, verifies them and does the statistics. The line protocol
is docs/runtimes.md.

Methods: write (os.write), pwrite (os.pwrite), writev (os.writev), pwritev (os.pwritev),
fileio (io.FileIO.write, the raw unbuffered file), buffered (open(fd, 'r+b').write, with
flush at the end of the part and flush + os.fsync/os.fdatasync as a sync), mmap
(mmap.mmap slice assignment, flush() = msync to sync). Latency: pwrite (overwrite0),
write, fileio, buffered (append).

Run: python3 -I runner.py, with the source memfd as fd 3 and the protocol on stdin and
stdout. Standard library only; Python 3.8 or later on Linux.

Clock: time.perf_counter() (and perf_counter_ns() for latency operations), which is
CLOCK_MONOTONIC on Linux. CPU: time.thread_time() (the thread's CPU clock) in each
thread, split into user and system as resource.getrusage(RUSAGE_THREAD) splits its own.
"""

import errno
import functools
import io
import json
import mmap
import os
import resource
import sys
import threading
import time

SOURCE_FD = 3
METHODS = ["write", "pwrite", "writev", "pwritev", "fileio", "buffered", "mmap"]
LATENCY = {"pwrite": "overwrite0", "write": "append", "fileio": "append", "buffered": "append"}
# Methods that write at the file position, which the parts of one file would share.
AT_POSITION = {"write", "writev", "fileio", "buffered"}
OPEN_FLAGS = {"sync": os.O_SYNC, "dsync": os.O_DSYNC, "direct": getattr(os, "O_DIRECT", 0)}
# Python has the constant from 3.13 only; Linux has had the advice since 5.14.
MADV_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)

now = time.perf_counter
now_ns = time.perf_counter_ns


class Failure(Exception):
    """A failed call: the reply's error line."""

    def __init__(self, call, err=0, why=None):
        super().__init__(call)
        self.err = err or 0
        self.text = "%s: %s" % (call, why or os.strerror(self.err)) if (why or self.err) else call


class ProtocolError(Exception):
    pass


def thread_cpu():
    """This thread's CPU clocks now: getrusage's user and system, and the exact total."""
    usage = resource.getrusage(resource.RUSAGE_THREAD)
    return usage.ru_utime, usage.ru_stime, time.thread_time()


def cpu_since(after, before):
    """(user, sys) since `before`: the thread clock's total, divided as getrusage divides
    its own deltas (it moves in ticks and lags for a running thread), all system time
    where they did not move; writebench does the same for native."""
    total = max(0.0, after[2] - before[2])
    user, sys_ = max(0.0, after[0] - before[0]), max(0.0, after[1] - before[1])
    # The share first: total * (user / sum) never exceeds total, (total * user) / sum can.
    user = total * (user / (user + sys_)) if user + sys_ > 0 else 0.0
    return user, max(0.0, total - user)


def place(cpus, index):
    """Moves this thread, writer `index`, to its CPU from the run's `cpus` line before the
    start line; returns the CPUs it may use, to give back after it, or None where it
    stays. A courtesy, as in writebench: where the kernel refuses, the run goes on."""
    if not cpus or index >= len(cpus):
        return None
    try:
        before = os.sched_getaffinity(0)  # 0: the calling thread
        os.sched_setaffinity(0, {cpus[index]})
        return before
    except OSError:
        return None


def release(before):
    """After the start line: free to run anywhere again."""
    if before is not None:
        try:
            os.sched_setaffinity(0, before)
        except OSError:
            pass


def sync_fd(fd, call):
    """fsync or fdatasync (both retry EINTR themselves, PEP 475)."""
    try:
        (os.fdatasync if call == "fdatasync" else os.fsync)(fd)
    except OSError as e:
        raise Failure(call, e.errno) from None


def reply(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def reply_error(run, failure):
    reply({"run": run, "error": failure.text, "errno": failure.err})


# ---- every:N, counted across the case's threads (docs/runtimes.md) ----


class Pacing:
    def __init__(self, every, call, writers, shared):
        self.every, self.call, self.writers, self.shared = every, call, writers, shared
        self.calls = 0
        self.ended = 0
        self.lock = threading.Lock()


class Pacer:
    """One writer's view of every:N; `sync` makes its file durable."""

    __slots__ = ("pacing", "since", "sync")

    def __init__(self, pacing, sync):
        self.pacing, self.since, self.sync = pacing, 0, sync

    def after_call(self):
        """Counts one call and syncs when the case's count is a multiple of N."""
        pacing = self.pacing
        self.since += 1
        with pacing.lock:
            pacing.calls += 1
            count = pacing.calls
        if count % pacing.every == 0:
            self.since = 0
            self.sync(pacing.call)

    def finish(self):
        """As the part ends: syncs the calls not yet synced, when this writer must."""
        pacing = self.pacing
        if not pacing.every:
            return
        if pacing.shared:
            with pacing.lock:
                pacing.ended += 1
                last = pacing.ended == pacing.writers
                left = pacing.calls % pacing.every
            if last and left:
                self.sync(pacing.call)
        elif self.since:
            self.since = 0
            self.sync(pacing.call)


# ---- the writing loops: one call per chunk, short writes completed ----
# `mv` is a memoryview of the source map, so every slice is a view: nothing is copied
# before the call. os.write and friends retry EINTR themselves (PEP 475).


def write_plain(fd, mv, pos, end, chunk, pacer):
    """write: os.write at the file position."""
    write = os.write
    while pos < end:
        stop = min(pos + chunk, end)
        while pos < stop:
            try:
                n = write(fd, mv[pos:stop])
            except OSError as e:
                raise Failure("write", e.errno) from None
            if not n:
                raise Failure("write", 0, "wrote 0 bytes")
            pos += n
        if pacer:
            pacer.after_call()


def write_raw(f, mv, pos, end, chunk, pacer):
    """fileio: FileIO.write (one write(2), so possibly short) at the file position."""
    write = f.write
    while pos < end:
        stop = min(pos + chunk, end)
        while pos < stop:
            try:
                n = write(mv[pos:stop])
            except OSError as e:
                raise Failure("fileio write", e.errno) from None
            if not n:
                raise Failure("fileio write", 0, "wrote 0 bytes")
            pos += n
        if pacer:
            pacer.after_call()


def write_positional(fd, mv, pos, end, offset, chunk, pacer):
    pwrite = os.pwrite
    delta = offset - pos  # file offset of source byte `pos`
    while pos < end:
        stop = min(pos + chunk, end)
        while pos < stop:
            try:
                n = pwrite(fd, mv[pos:stop], pos + delta)
            except OSError as e:
                raise Failure("pwrite", e.errno) from None
            if not n:
                raise Failure("pwrite", 0, "wrote 0 bytes")
            pos += n
        if pacer:
            pacer.after_call()


def write_vectored(fd, mv, pos, end, offset, chunk, iov, positional, pacer):
    """writev/pwritev: `iov` views of `chunk` bytes per call; after a short write, the
    bytes left go again, split where they were."""
    name = "pwritev" if positional else "writev"
    call = os.pwritev if positional else os.writev
    batch_bytes = chunk * iov
    delta = offset - pos
    while pos < end:
        batch = mv[pos:min(pos + batch_bytes, end)]
        buffers = [batch[i:i + chunk] for i in range(0, len(batch), chunk)]
        done = 0
        while True:
            try:
                n = call(fd, buffers, pos + done + delta) if positional else call(fd, buffers)
            except OSError as e:
                raise Failure(name, e.errno) from None
            if not n:
                raise Failure(name, 0, "wrote 0 bytes")
            done += n
            if done >= len(batch):
                break
            boundary = done - done % chunk + chunk
            buffers = [batch[done:boundary]] + [batch[i:i + chunk] for i in range(boundary, len(batch), chunk)]
        pos += len(batch)
        if pacer:
            pacer.after_call()


def write_buffered(f, mv, pos, end, chunk, pacer):
    """BufferedWriter.write takes every byte (it completes short raw writes itself)."""
    write = f.write
    try:
        while pos < end:
            stop = min(pos + chunk, end)
            write(mv[pos:stop])
            pos = stop
            if pacer:
                pacer.after_call()
        # The data is not in the kernel before the buffer is flushed: part of the part.
        f.flush()
    except OSError as e:
        raise Failure("buffered write", e.errno) from None


def write_mapped(m, mv, pos, end, start, chunk, pacer):
    """Slice assignment from a view: one memcpy into the map per chunk."""
    delta = start - pos
    while pos < end:
        stop = min(pos + chunk, end)
        m[pos + delta:stop + delta] = mv[pos:stop]
        pos = stop
        if pacer:
            pacer.after_call()


# ---- a case ----


class Job:
    def __init__(self, latency):
        self.latency = latency
        self.method = None
        self.threads = self.iov = self.files = self.chunk = 1
        self.open_flags = 0
        self.end = "none"
        self.every = 0
        self.everycall = "fsync"
        self.source = None
        self.pattern = "append"
        self.bytes = self.count = self.warmup = 0
        self.parts = []  # (file, offset, length, source offset)
        self.source_error = None


class Source:
    """The memfd on fd 3, mapped read-only and shared once per case."""

    def __init__(self):
        self.map = None
        self.view = memoryview(b"")

    def remap(self, length):
        self.close()
        if length:
            self.map = mmap.mmap(SOURCE_FD, length, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
            self.view = memoryview(self.map)

    def close(self):
        if self.map is not None:
            self.view.release()
            self.map.close()
        self.map, self.view = None, memoryview(b"")

    def populate(self):
        """Faults the source into our map before any clock starts (writebench may have
        given its memory back since the last run), so no part's span pays for it."""
        if self.map is None:
            return
        try:
            self.map.madvise(MADV_POPULATE_READ)
        except OSError:
            self.view[::mmap.PAGESIZE].tobytes()  # before Linux 5.14: touch every page


SOURCE = Source()


class Run:
    def __init__(self, job, nfiles, cpus):
        self.job = job
        self.cpus = cpus
        self.fds = []
        self.objects = [None] * nfiles  # FileIO, buffered file or mmap per file
        self.pacing = Pacing(job.every, job.everycall, job.threads, nfiles == 1)
        self.own_sync = job.end != "none" and nfiles > 1
        self.barrier = threading.Barrier(job.threads) if job.threads > 1 else None
        self.times = [None] * len(job.parts)
        self.errors = [None] * len(job.parts)

    def sync(self, file, call):
        """A sync of one file: flush first for the buffered file, msync for a map."""
        method, obj = self.job.method, self.objects[file]
        if method == "buffered":
            try:
                obj.flush()
            except OSError as e:
                raise Failure("flush", e.errno) from None
        elif method == "mmap" and obj is not None:
            try:
                obj.flush()
            except OSError as e:
                raise Failure("msync", e.errno) from None
            if call != "fsync":
                return  # msync is a data sync; fsync adds the metadata
        sync_fd(self.fds[file], call)

    def write_part(self, index):
        job = self.job
        file, offset, length, src = job.parts[index]
        fd, obj = self.fds[file], self.objects[file]
        error = None
        placed = place(self.cpus, index)
        try:
            # Methods at the file position: place it once, before the clock.
            if job.method == "write" or job.method == "writev":
                os.lseek(fd, offset, os.SEEK_SET)
            elif job.method in ("fileio", "buffered"):
                obj.seek(offset)
        except OSError as e:
            error = Failure("seek", e.errno)
        if self.barrier is not None:
            try:
                self.barrier.wait()
            except threading.BrokenBarrierError:
                release(placed)
                self.errors[index] = error or Failure("start of the writer threads", 0, "called off")
                return
        release(placed)
        pacer = Pacer(self.pacing, lambda call: self.sync(file, call)) if job.every else None
        mv, end, chunk, method = SOURCE.view, src + length, job.chunk, job.method
        cpu0 = thread_cpu()
        start = now()
        try:
            if error:
                raise error
            if method == "write":
                write_plain(fd, mv, src, end, chunk, pacer)
            elif method == "fileio":
                write_raw(obj, mv, src, end, chunk, pacer)
            elif method == "pwrite":
                write_positional(fd, mv, src, end, offset, chunk, pacer)
            elif method == "writev" or method == "pwritev":
                write_vectored(fd, mv, src, end, offset, chunk, job.iov, method == "pwritev", pacer)
            elif method == "buffered":
                write_buffered(obj, mv, src, end, chunk, pacer)
            elif method == "mmap":
                write_mapped(obj, mv, src, end, offset, chunk, pacer)
            if pacer:
                pacer.finish()
        except Failure as failure:
            error = failure
        except Exception as e:  # e.g. ValueError from the map: still a reply, not a dead thread
            error = Failure("%s: %s" % (method, type(e).__name__), getattr(e, "errno", 0), str(e))
        ended = now()
        synced = None
        if error is None and self.own_sync:
            try:
                self.sync(file, job.end)
            except Failure as failure:
                error = failure
            synced = now()
        user, sys_ = cpu_since(thread_cpu(), cpu0)
        self.times[index] = {"start": start, "end": ended, "synced": synced, "user": user, "sys": sys_}
        self.errors[index] = error


def check_layout(job, nfiles):
    if nfiles != job.files:
        raise Failure("%d file lines for files=%d" % (nfiles, job.files))
    if len(job.parts) != job.threads:
        raise Failure("%d part lines for threads=%d" % (len(job.parts), job.threads))
    seen = set()
    for i, (file, offset, length, src) in enumerate(job.parts):
        if file >= nfiles:
            raise Failure("part %d: file %d of %d" % (i, file, nfiles))
        if src + length > job.source:
            raise Failure("part %d: source bytes %d+%d beyond the source's %d" % (i, src, length, job.source))
        if job.method in AT_POSITION and file in seen:
            raise Failure("%s writes at the file position: each part needs a file of its own" % job.method)
        seen.add(file)


def map_files(run):
    """mmap: a map of each file's whole length. A map cannot extend its file, and a fault
    into a full file system is SIGBUS, so both are refused here (as native does)."""
    job, needed, sizes = run.job, 0, []
    for file, fd in enumerate(run.fds):
        st = os.fstat(fd)
        want = max([off + ln for (f, off, ln, _) in job.parts if f == file] or [0])
        if st.st_size < want or (want and st.st_size == 0):
            raise Failure("mmap cannot extend a file")
        needed += max(0, st.st_size - st.st_blocks * 512)
        sizes.append(st.st_size)
    if run.fds:
        vfs = os.fstatvfs(run.fds[0])
        free = vfs.f_bavail * vfs.f_frsize
        if needed > free:
            raise Failure("mmap needs %d bytes free, the file system has %d" % (needed, free), errno.ENOSPC)
    for file, (fd, size) in enumerate(zip(run.fds, sizes)):
        if size:  # mmap refuses an empty map; a part of 0 bytes needs none
            try:
                run.objects[file] = mmap.mmap(fd, size)  # MAP_SHARED, PROT_READ | PROT_WRITE
            except OSError as e:
                raise Failure("mmap", e.errno) from None


def open_files(job, paths):
    """os.open with the case's flags; O_RDWR where the object needs it (maps, 'r+b')."""
    access = os.O_WRONLY if job.method in ("write", "pwrite", "writev", "pwritev") else os.O_RDWR
    fds = []
    try:
        for path in paths:
            fds.append(os.open(path, access | job.open_flags))  # non-inheritable (O_CLOEXEC)
    except OSError as e:
        for fd in fds:
            os.close(fd)
        raise Failure("open", e.errno) from None
    return fds


def file_object(method, fd):
    """The object a Python program writes with; both close the descriptor."""
    if method == "fileio":
        return io.FileIO(fd, "r+b", closefd=True)
    return open(fd, "r+b", closefd=True)  # BufferedRandom over FileIO: never truncates


def close_all(run):
    """munmap, then close files and descriptors; the first error is raised."""
    failure = None
    for file, fd in enumerate(run.fds):
        obj = run.objects[file]
        run.objects[file] = None
        try:
            if obj is not None:
                obj.close()  # mmap: munmap; file objects: close (and flush, already done)
            if obj is None or run.job.method == "mmap":
                os.close(fd)
        except (OSError, ValueError) as e:
            failure = failure or Failure("close", getattr(e, "errno", 0) or 0)
    run.fds = []
    if failure:
        raise failure


def run_case(job, run_id, paths, cpus):
    check_layout(job, len(paths))
    SOURCE.populate()
    run = Run(job, len(paths), cpus)
    run.fds = open_files(job, paths)
    try:
        setup_start = now()
        if job.method == "mmap":
            map_files(run)
        elif job.method in ("fileio", "buffered"):
            for file, fd in enumerate(run.fds):
                run.objects[file] = file_object(job.method, fd)
        setup = now() - setup_start

        if job.threads == 1:
            run.write_part(0)
        else:
            workers = [threading.Thread(target=run.write_part, args=(i,)) for i in range(job.threads)]
            started = []
            try:
                for worker in workers:
                    worker.start()
                    started.append(worker)
            except RuntimeError as e:  # can't start new thread
                run.barrier.abort()
                for worker in started:
                    worker.join()
                raise Failure("start of a writer thread", 0, str(e)) from None
            for worker in workers:
                worker.join()
        for error in run.errors:
            if error:
                raise error

        cpu0 = thread_cpu()
        sync = None
        if job.end != "none" and not run.own_sync:
            sync_start = now()
            for file in range(len(run.fds)):
                run.sync(file, job.end)
            sync = [sync_start, now()]
        close_start = now()
        close_all(run)
        close = [close_start, now()]
        user, sys_ = cpu_since(thread_cpu(), cpu0)
    finally:
        try:
            close_all(run)  # after a failure: untimed cleanup
        except Failure:
            pass
    reply({"run": run_id, "setup": setup, "parts": run.times, "sync": sync, "close": close,
           "user": user, "sys": sys_})


# ---- latency: each operation timed alone ----


def run_latency(job, run_id, paths, cpus):
    method = job.method
    if LATENCY.get(method) != job.pattern:
        raise Failure("the python runner's latency methods are pwrite (overwrite0) and write, fileio, "
                      "buffered (append), not %s (%s)" % (method, job.pattern))
    if len(paths) != 1 or job.bytes > job.source:
        raise Failure("latency needs one file and bytes <= source (%d files, bytes=%d, source=%d)"
                      % (len(paths), job.bytes, job.source))
    SOURCE.populate()
    release(place(cpus, 0))
    data = SOURCE.view[:job.bytes]
    size = len(data)
    access = os.O_WRONLY if method in ("write", "pwrite") else os.O_RDWR
    try:
        fd = os.open(paths[0], access | job.open_flags)
    except OSError as e:
        raise Failure("open", e.errno) from None
    obj = file_object(method, fd) if method in ("fileio", "buffered") else None
    try:
        # One operation: the whole `bytes`, short writes completed; returns nothing.
        if method == "pwrite":
            def operation():
                done = 0
                while done < size:
                    n = os.pwrite(fd, data[done:], done)
                    if not n:
                        raise Failure("pwrite", 0, "wrote 0 bytes")
                    done += n
        elif method == "write" or method == "fileio":
            write = obj.write if obj else functools.partial(os.write, fd)
            def operation():
                done = 0
                while done < size:
                    n = write(data[done:])
                    if not n:
                        raise Failure(method, 0, "wrote 0 bytes")
                    done += n
        else:
            def operation():
                # The flush is part of the operation: before it the bytes are in
                # Python's buffer, not in the kernel.
                obj.write(data)
                obj.flush()
        every, call = job.every, job.everycall
        total = job.warmup + job.count
        ops = [0] * job.count
        syncs = []
        calls = 0
        cpu0 = thread_cpu()
        loop_start = now()
        for number in range(total):
            if number == job.warmup:
                cpu0 = thread_cpu()
                loop_start = now()
            t0 = now_ns()
            try:
                operation()
            except OSError as e:
                raise Failure(method, e.errno) from None
            t1 = t2 = now_ns()
            calls += 1
            if every and calls % every == 0:
                sync_fd(fd, call)
                t2 = now_ns()
                if number >= job.warmup:
                    syncs.append(t2 - t1)
            if number >= job.warmup:
                ops[number - job.warmup] = t2 - t0
        loop_end = now()
        sync = None
        if job.end != "none":
            sync_start = now()
            sync_fd(fd, job.end)
            sync = [sync_start, now()]
        user, sys_ = cpu_since(thread_cpu(), cpu0)
    finally:
        try:
            if obj is not None:
                obj.close()
            else:
                os.close(fd)
        except OSError:
            pass
    reply({"run": run_id, "loop": [loop_start, loop_end], "ops": ops, "syncs": syncs, "sync": sync,
           "user": user, "sys": sys_})


# ---- parsing ----


def parse_header(words, latency):
    job = Job(latency)
    numbers = {"threads", "chunk", "iov", "qd", "files", "every", "source", "bytes", "count", "warmup"}
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq:
            raise ProtocolError("expected key=value")
        if key in numbers:
            if not value.isdigit():
                raise ProtocolError("bad number")
            setattr(job, key, int(value))
        elif key == "method":
            job.method = value
        elif key == "open":
            job.open_flags = 0
            if value != "-":
                for flag in value.split(","):
                    if flag not in OPEN_FLAGS:
                        raise ProtocolError("bad open flags")
                    job.open_flags |= OPEN_FLAGS[flag]
        elif key == "end":
            if value not in ("fsync", "fdatasync", "none"):
                raise ProtocolError("bad end")
            job.end = value
        elif key == "everycall":
            if value not in ("fsync", "fdatasync"):
                raise ProtocolError("bad everycall")
            job.everycall = value
        elif key == "pattern":
            if value not in ("overwrite0", "append"):
                raise ProtocolError("bad pattern")
            job.pattern = value
        # Other keys (qd...) mean nothing to this runner.
    if job.method is None or job.source is None:
        raise ProtocolError("method= and source= are required")
    if job.threads < 1 or job.chunk < 1 or job.iov < 1 or job.files < 1:
        raise ProtocolError("threads, chunk, iov and files must be at least 1")
    try:
        SOURCE.remap(job.source)
    except (OSError, ValueError) as e:
        job.source_error = Failure("mmap of the source (fd 3)", getattr(e, "errno", 0) or 0)
    return job


def serve():
    job, run_id, paths, cpus = None, None, [], None
    for raw in sys.stdin.buffer:
        try:
            line = raw.rstrip(b"\n")
            if not line:
                continue
            command, _, rest = line.partition(b" ")
            if command == b"file":
                if run_id is None:
                    raise ProtocolError("file before run")
                paths.append(rest)  # bytes: any path the file system takes
                continue
            text = line.decode("ascii", "replace")
            words = text.split()
            if command in (b"case", b"latency"):
                job = parse_header(words, command == b"latency")
            elif command == b"part":
                if job is None or job.latency or len(words) != 5 or not all(w.isdigit() for w in words[1:]):
                    raise ProtocolError("bad part line")
                job.parts.append(tuple(int(w) for w in words[1:]))
            elif command == b"run":
                if job is None or len(words) != 2 or not words[1].lstrip("-").isdigit():
                    raise ProtocolError("bad run line")
                run_id, paths, cpus = int(words[1]), [], None
            elif command == b"cpus":
                if run_id is None or len(words) < 2 or not all(w.isdigit() for w in words[1:]):
                    raise ProtocolError("bad cpus line")
                cpus = [int(w) for w in words[1:]]
            elif text == "go":
                if run_id is None:
                    raise ProtocolError("go before run")
                try:
                    if job.source_error:
                        raise job.source_error
                    if job.latency:
                        run_latency(job, run_id, paths, cpus)
                    elif job.method not in METHODS:
                        raise Failure("the python runner has no method %s" % job.method)
                    else:
                        run_case(job, run_id, paths, cpus)
                except Failure as failure:
                    reply_error(run_id, failure)
                except OSError as e:  # a call outside the loops (fstat, fstatvfs...)
                    reply_error(run_id, Failure(type(e).__name__, e.errno or 0, e.strerror))
            elif text == "quit":
                return
            else:
                raise ProtocolError("unknown command")
        except ProtocolError as e:
            shown = raw.rstrip(b"\n").decode("utf-8", "replace")[:200]
            raise ProtocolError("%s: %s" % (e, shown)) from None


def main():
    reply({"runner": "python", "protocol": 1, "version": "Python " + sys.version.split()[0], "methods": METHODS})
    try:
        serve()
    except ProtocolError as e:
        reply({"run": -1, "error": str(e), "errno": 0})
        sys.exit(2)


if __name__ == "__main__":
    main()
