//! writebench's Zig runner: writes the parts of one case the way a Zig program would,
//! and times them; writebench prepares the files, generates the data (the source, a
//! memfd on fd 3), verifies every byte and does the statistics. The line protocol on
//! stdin/stdout is docs/runtimes.md.
//!
//! Methods:
//! - `write`: `std.Io.File.writeStreaming` of each chunk at the file position, one
//!   thread (or one per file with a file per thread);
//! - `pwrite`: `std.Io.File.writePositional` at explicit offsets, one `std.Thread` per part;
//! - `io_uring`: `std.os.linux.IoUring`, one ring per part, IORING_OP_WRITE at explicit
//!   offsets with up to `qd` requests in flight, short completions resubmitted.
//! Latency mode: `pwrite` (pattern overwrite0) and `write` (pattern append).
//!
//! Written for Zig 0.17 (the PyPI `ziglang` package), whose std does file I/O through
//! `std.Io` (here the default `std.Io.Threaded` that `main(init)` receives); the
//! `std.posix` write/pwrite/fsync wrappers of earlier versions are gone. Open flags
//! (O_SYNC, O_DSYNC, O_DIRECT) are not in `Io.Dir.openFile`, so files are opened with
//! `std.posix.openat` and wrapped in an `Io.File`. std.Io's Linux file writes are
//! writev(2)/pwritev(2) of one iovec (what `write` and `pwrite` here issue, per strace).
//!
//! Build: python3 -m ziglang build-exe -O ReleaseFast -femit-bin=runner runner.zig
//! Version (for the cache key): python3 -m ziglang version
//! Run:   ./runner   (stdin/stdout pipes, the source memfd as fd 3)

const std = @import("std");
const builtin = @import("builtin");
const Io = std.Io;
const File = Io.File;
const posix = std.posix;
const linux = std.os.linux;
const IoUring = linux.IoUring;
const Allocator = std.mem.Allocator;

const protocol_version = 1;
const method_names = [_][]const u8{ "write", "pwrite", "io_uring" };

const Method = enum { write, pwrite, io_uring };
const SyncCall = enum { fsync, fdatasync };
const Pattern = enum { overwrite0, append };

/// The most one write can report (the kernel's MAX_RW_COUNT); a longer io_uring request
/// would not fit the SQE's u32 length, and completes short anyway.
const max_request: usize = 0x7fff_f000;

// ---------------------------------------------------------------- errors

/// The one error a failing call returns; its details are in `last_failure`.
const Fail = error{Failed};

/// A failed call: what was called and why, with the OS error number when there is one.
const Failure = struct {
    op: []const u8,
    errno: u32,
    /// The Zig error's name, said when the errno has no text here.
    name: []const u8 = "",

    fn of(op: []const u8, err: anyerror) Failure {
        return .{ .op = op, .errno = errnoOf(err), .name = @errorName(err) };
    }

    fn ofErrno(op: []const u8, errno: u32) Failure {
        return .{ .op = op, .errno = errno };
    }

    fn text(f: Failure) []const u8 {
        if (errnoText(f.errno)) |t| return t;
        // std.Io treats some errno values as programming errors (EINVAL among them, as
        // from a misaligned O_DIRECT write) and reports them without the number.
        if (std.mem.eql(u8, f.name, "Unexpected")) return "Unexpected (an error std.Io reports without its errno, e.g. EINVAL)";
        return if (f.name.len > 0) f.name else "unknown error";
    }
};

/// std.Io and std.posix turn errno values into error names; this turns them back, so
/// the reply carries the number writebench reports (0 where the OS gave none).
fn errnoOf(err: anyerror) u32 {
    return switch (err) {
        error.PermissionDenied => 1,
        error.FileNotFound => 2,
        error.SignalInterrupt => 4,
        error.InputOutput => 5,
        error.NoDevice => 6, // ENXIO for writes (std.Io.File documents errno 6)
        error.NotOpenForWriting => 9,
        error.WouldBlock, error.LockedMemoryLimitExceeded, error.ThreadQuotaExceeded => 11,
        error.SystemResources, error.OutOfMemory => 12,
        error.AccessDenied => 13,
        error.DeviceBusy => 16,
        error.PathAlreadyExists => 17,
        error.MemoryMappingNotSupported => 19,
        error.NotDir => 20,
        error.IsDir => 21,
        error.BadPathName, error.ArgumentsInvalid, error.SubmissionQueueEntryInvalid => 22,
        error.SystemFdQuotaExceeded => 23,
        error.ProcessFdQuotaExceeded => 24,
        error.FileBusy => 26,
        error.FileTooBig => 27,
        error.NoSpaceLeft => 28,
        error.Unseekable => 29,
        error.ReadOnlyFileSystem => 30,
        error.BrokenPipe => 32,
        error.NameTooLong => 36,
        error.SystemOutdated => 38,
        error.SymLinkLoop => 40,
        error.FileLocksUnsupported, error.OpcodeNotSupported => 95,
        error.DiskQuota => 122,
        error.Canceled => 125,
        else => 0,
    };
}

/// strerror's text for the errors a write benchmark meets (no libc to ask).
fn errnoText(errno: u32) ?[]const u8 {
    return switch (errno) {
        1 => "Operation not permitted",
        2 => "No such file or directory",
        4 => "Interrupted system call",
        5 => "Input/output error",
        6 => "No such device or address",
        9 => "Bad file descriptor",
        11 => "Resource temporarily unavailable",
        12 => "Cannot allocate memory",
        13 => "Permission denied",
        14 => "Bad address",
        16 => "Device or resource busy",
        17 => "File exists",
        19 => "No such device",
        20 => "Not a directory",
        21 => "Is a directory",
        22 => "Invalid argument",
        23 => "Too many open files in system",
        24 => "Too many open files",
        26 => "Text file busy",
        27 => "File too large",
        28 => "No space left on device",
        29 => "Illegal seek",
        30 => "Read-only file system",
        32 => "Broken pipe",
        36 => "File name too long",
        38 => "Function not implemented",
        40 => "Too many levels of symbolic links",
        95 => "Operation not supported",
        122 => "Disk quota exceeded",
        125 => "Operation canceled",
        else => null,
    };
}

// ---------------------------------------------------------------- clocks

/// One origin per process: every time in a reply is seconds since it.
var origin: Io.Timestamp = .zero;

fn now(io: Io) Io.Timestamp {
    // CLOCK_MONOTONIC (through the vDSO).
    return Io.Timestamp.now(io, .awake);
}

fn seconds(t: Io.Timestamp) f64 {
    return @as(f64, @floatFromInt(t.nanoseconds - origin.nanoseconds)) / 1e9;
}

fn nanosBetween(a: Io.Timestamp, b: Io.Timestamp) u64 {
    // At least 1, as native records: a zero would read as "not measured".
    return @max(1, @as(u64, @intCast(@max(0, b.nanoseconds - a.nanoseconds))));
}

/// CPU seconds of the calling thread, user and system. A reading also holds the thread's
/// CPU clock (`total`), which is exact; getrusage moves in ticks and lags for a running
/// thread, so `since` divides the clock's total as getrusage divides its own deltas (all
/// system time where they did not move), as writebench does for native.
const Cpu = struct {
    user: f64 = 0,
    sys: f64 = 0,
    total: f64 = 0,

    fn ofThisThread() Cpu {
        const usage = posix.getrusage(linux.rusage.THREAD);
        var ts: linux.timespec = undefined;
        const total: f64 = if (linux.clock_gettime(.THREAD_CPUTIME_ID, &ts) == 0)
            @as(f64, @floatFromInt(ts.sec)) + @as(f64, @floatFromInt(ts.nsec)) * 1e-9
        else
            0;
        return .{ .user = tv(usage.utime), .sys = tv(usage.stime), .total = total };
    }

    fn since(self: Cpu, before: Cpu) Cpu {
        const total = @max(0, self.total - before.total);
        const u = @max(0, self.user - before.user);
        const s = @max(0, self.sys - before.sys);
        // The share first: total * (u / sum) never exceeds total, (total * u) / sum can.
        const user = if (u + s > 0) total * (u / (u + s)) else 0;
        return .{ .user = user, .sys = @max(0, total - user) };
    }

    fn tv(t: linux.timeval) f64 {
        return @as(f64, @floatFromInt(t.sec)) + @as(f64, @floatFromInt(t.usec)) * 1e-6;
    }
};

/// The run's `cpus` line: the CPU each writer starts on (none: the scheduler places them).
var run_cpus: [linux.CPU_SETSIZE * 8]usize = undefined;
var run_ncpus: usize = 0;

/// What a writer may run on before it was placed, to give back after the start line.
const Placed = struct {
    before: linux.cpu_set_t,
    moved: bool,

    /// Moves the calling thread, writer `index`, to its CPU before the start line. A
    /// courtesy, as in writebench: where the kernel refuses, the run goes on unplaced.
    fn place(index: usize) Placed {
        var p: Placed = .{ .before = std.mem.zeroes(linux.cpu_set_t), .moved = false };
        if (index >= run_ncpus) return p;
        if (linux.sched_getaffinity(0, @sizeOf(linux.cpu_set_t), &p.before) != 0) return p;
        var one = std.mem.zeroes(linux.cpu_set_t);
        const cpu = run_cpus[index];
        one[cpu / @bitSizeOf(usize)] |= @as(usize, 1) << @intCast(cpu % @bitSizeOf(usize));
        linux.sched_setaffinity(0, &one) catch return p;
        p.moved = true;
        return p;
    }

    /// After the start line: free to run anywhere again.
    fn release(p: *const Placed) void {
        if (p.moved) linux.sched_setaffinity(0, &p.before) catch {};
    }
};

// ---------------------------------------------------------------- calls

/// Writes all of `bytes` at the file position; a short write continues with the rest.
/// (Io.File.writeStreamingAll would loop forever on a zero-byte write; say it instead.)
fn writeAll(io: Io, file: File, bytes: []const u8) Fail!void {
    var done: usize = 0;
    while (done < bytes.len) {
        // std.Io retries EINTR itself.
        const n = file.writeStreaming(io, &.{}, &.{bytes[done..]}, 1) catch |err| return failWith(Failure.of("write", err));
        if (n == 0) return failWith(.{ .op = "write", .errno = 0, .name = "wrote 0 bytes" });
        done += n;
    }
}

/// Writes all of `bytes` at `offset`; a short write continues with the rest.
fn pwriteAll(io: Io, file: File, bytes: []const u8, offset: u64) Fail!void {
    var done: usize = 0;
    while (done < bytes.len) {
        const n = file.writePositional(io, &.{bytes[done..]}, offset + done) catch |err| return failWith(Failure.of("pwrite", err));
        if (n == 0) return failWith(.{ .op = "pwrite", .errno = 0, .name = "wrote 0 bytes" });
        done += n;
    }
}

fn syncFile(io: Io, file: File, call: SyncCall) Fail!void {
    switch (call) {
        .fsync => file.sync(io) catch |err| return failWith(Failure.of("fsync", err)),
        .fdatasync => {
            // std.Io has no fdatasync, and std.posix.fdatasync does not retry EINTR.
            while (true) {
                switch (posix.errno(linux.fdatasync(file.handle))) {
                    .SUCCESS => return,
                    .INTR => continue,
                    else => |e| return failWith(Failure.ofErrno("fdatasync", @backingInt(e))),
                }
            }
        },
    }
}

/// Errors carry a payload here, which Zig error sets cannot: the failing call stores its
/// Failure in a threadlocal and returns this one error, read back by `lastFailure`.
threadlocal var last_failure: Failure = .{ .op = "", .errno = 0 };

fn failWith(f: Failure) error{Failed} {
    last_failure = f;
    return error.Failed;
}

fn lastFailure() Failure {
    return last_failure;
}

// ---------------------------------------------------------------- every:N

/// `every:N` across the run's writers (docs/runtimes.md): the thread whose call makes the
/// count a multiple of N syncs; as parts end, one file: the last writer to end syncs if
/// the count is not a multiple of N; a file per thread: each writer with calls not yet
/// synced syncs its own file. The same rule as writebench's native `Pacing`.
const Pacing = struct {
    every: u64,
    call: SyncCall,
    calls: std.atomic.Value(u64) = .init(0),
    ended: std.atomic.Value(usize) = .init(0),
    writers: usize,
    shared_file: bool,
};

const Pacer = struct {
    pacing: *Pacing,
    since: u64 = 0,

    /// Counts one call; true when the caller must sync now.
    inline fn due(p: *Pacer) bool {
        const n = p.pacing.every;
        if (n == 0) return false;
        p.since += 1;
        // AcqRel: the syncing writer sees every call counted before its own.
        const count = p.pacing.calls.fetchAdd(1, .acq_rel) + 1;
        if (count % n == 0) {
            p.since = 0;
            return true;
        }
        return false;
    }

    fn afterCall(p: *Pacer, io: Io, file: File) Fail!void {
        if (p.due()) try syncFile(io, file, p.pacing.call);
    }

    fn finish(p: *Pacer, io: Io, file: File) Fail!void {
        const n = p.pacing.every;
        if (n == 0) return;
        const must = if (!p.pacing.shared_file)
            p.since > 0
        else
            p.pacing.ended.fetchAdd(1, .acq_rel) + 1 == p.pacing.writers and
                p.pacing.calls.load(.acquire) % n != 0;
        if (must) {
            p.since = 0;
            try syncFile(io, file, p.pacing.call);
        }
    }
};

// ---------------------------------------------------------------- the case

const Part = struct { file: usize, offset: u64, len: u64, src: usize };

const Case = struct {
    method: Method,
    threads: usize,
    chunk: usize,
    qd: usize,
    files: usize,
    open: posix.O,
    end: ?SyncCall,
    every: u64,
    everycall: SyncCall,
    parts: []Part,
    /// Why every run of this case must fail, for combinations this runner does not do.
    refusal: ?Failure = null,
};

const Latency = struct {
    pattern: Pattern,
    bytes: usize,
    count: u64,
    warmup: u64,
    open: posix.O,
    end: ?SyncCall,
    every: u64,
    everycall: SyncCall,
    /// Room for the recorded operations and syncs, made once, outside every timed loop.
    ops: []u64,
    syncs: []u64,
};

/// The source: fd 3 mapped read-only and shared, once.
var source: []const u8 = &.{};
var source_map: ?[]align(std.heap.page_size_min) const u8 = null;

fn mapSource(len: usize) Fail!void {
    if (source_map) |m| posix.munmap(m);
    source_map = null;
    source = &.{};
    if (len == 0) return;
    const m = posix.mmap(null, len, .{ .READ = true }, .{ .TYPE = .SHARED }, 3, 0) catch |err|
        return failWith(Failure.of("mmap of the source (fd 3)", err));
    source_map = m;
    source = m;
}

/// Faults the source's pages into our map before a clock starts. writebench fills the
/// memfd afresh for each run and gives its pages back after it, so a map made once per
/// case has no pages at the next run: without this, each of the run's first touches of
/// a source page (4096 per 16 MiB) would be a page fault inside the timed span, which a
/// native writer, whose buffer is warm, does not pay.
fn populateSource() Fail!void {
    const m = source_map orelse return;
    const rc = linux.madvise(@ptrCast(@constCast(m.ptr)), m.len, 22); // MADV_POPULATE_READ
    switch (posix.errno(rc)) {
        .SUCCESS => {},
        // Before Linux 5.14: touch one byte of every page instead.
        .INVAL => {
            var sink: u8 = 0;
            var i: usize = 0;
            while (i < m.len) : (i += std.heap.pageSize()) sink ^= @as(*const volatile u8, &m[i]).*;
            std.mem.doNotOptimizeAway(sink);
        },
        else => |e| return failWith(Failure.ofErrno("madvise(MADV_POPULATE_READ) of the source", @backingInt(e))),
    }
}

// ---------------------------------------------------------------- one run

const PartResult = struct {
    start: f64 = 0,
    end: f64 = 0,
    synced: ?f64 = null,
    cpu: Cpu = .{},
    failure: ?Failure = null,
};

/// The writers' start line: every writer has been created and has arrived before any
/// of them starts, so thread creation is outside every span.
const StartLine = struct {
    mutex: Io.Mutex = .init,
    cond: Io.Condition = .init,
    waiting: usize,
    open: bool = false,
    called_off: bool = false,

    /// Waits for the others; false when the run was called off (a writer could not start).
    fn arrive(s: *StartLine, io: Io) bool {
        s.mutex.lockUncancelable(io);
        defer s.mutex.unlock(io);
        s.waiting -= 1;
        if (s.waiting == 0) {
            s.open = true;
            s.cond.broadcast(io);
        }
        while (!s.open and !s.called_off) s.cond.waitUncancelable(io, &s.mutex);
        return !s.called_off;
    }

    fn callOff(s: *StartLine, io: Io) void {
        s.mutex.lockUncancelable(io);
        defer s.mutex.unlock(io);
        s.called_off = true;
        s.cond.broadcast(io);
    }
};

/// One io_uring request still owed: exactly the bytes still to write, and where.
const Request = struct { offset: u64, bytes: []const u8 };

/// A part's ring and its request slots (a slot's index is its user_data), made in the
/// untimed set-up so the timed loop allocates nothing.
const Ring = struct {
    ring: IoUring,
    /// Created disabled (single issuer), enabled by the writer thread.
    disabled: bool,
    owed: []?Request,
    free: []usize,
    free_len: usize,
    cqes: []linux.io_uring_cqe,
};

const Run = struct {
    io: Io,
    case: *const Case,
    files: []File,
    rings: []Ring,
    pacing: Pacing,
    line: StartLine,
    results: []PartResult,
    /// A file per thread with an `end` mode: each writer syncs its own file.
    own_sync: bool,
};

fn writerThread(run: *Run, index: usize) void {
    const placed = Placed.place(index);
    if (run.case.method == .io_uring) enableRing(&run.rings[index]) catch {
        run.results[index].failure = lastFailure();
        // Still arrive, so the others are not left waiting; then write nothing.
        _ = run.line.arrive(run.io);
        placed.release();
        return;
    };
    const go = run.line.arrive(run.io);
    placed.release();
    if (!go) return;
    writePart(run, index);
}

/// Times and writes part `index`, then syncs its file when it is the writer's own.
fn writePart(run: *Run, index: usize) void {
    const io = run.io;
    const result = &run.results[index];
    const cpu = Cpu.ofThisThread();
    result.start = seconds(now(io));
    const written = switch (run.case.method) {
        .write => writeSpan(run, index),
        .pwrite => pwriteSpan(run, index),
        .io_uring => uringSpan(run, index),
    };
    result.end = seconds(now(io));
    written catch {
        result.failure = lastFailure();
        return;
    };
    if (run.own_sync) {
        const part = run.case.parts[index];
        syncFile(io, run.files[part.file], run.case.end.?) catch {
            result.failure = lastFailure();
            return;
        };
        result.synced = seconds(now(io));
    }
    result.cpu = Cpu.ofThisThread().since(cpu);
}

fn writeSpan(run: *Run, index: usize) Fail!void {
    const io = run.io;
    const part = run.case.parts[index];
    const file = run.files[part.file];
    const chunk = run.case.chunk;
    // write(2) uses the file position, at 0 in a freshly opened file; place it only
    // when the part starts elsewhere.
    if (part.offset != 0) {
        switch (posix.errno(linux.lseek(file.handle, @intCast(part.offset), linux.SEEK.SET))) {
            .SUCCESS => {},
            else => |e| return failWith(Failure.ofErrno("lseek", @backingInt(e))),
        }
    }
    const bytes = source[part.src..][0..part.len];
    var pacer: Pacer = .{ .pacing = &run.pacing };
    var done: usize = 0;
    while (done < bytes.len) {
        const n = @min(chunk, bytes.len - done);
        try writeAll(io, file, bytes[done..][0..n]);
        done += n;
        try pacer.afterCall(io, file);
    }
    try pacer.finish(io, file);
}

fn pwriteSpan(run: *Run, index: usize) Fail!void {
    const io = run.io;
    const part = run.case.parts[index];
    const file = run.files[part.file];
    const chunk = run.case.chunk;
    const bytes = source[part.src..][0..part.len];
    var pacer: Pacer = .{ .pacing = &run.pacing };
    var done: usize = 0;
    while (done < bytes.len) {
        const n = @min(chunk, bytes.len - done);
        try pwriteAll(io, file, bytes[done..][0..n], part.offset + done);
        done += n;
        try pacer.afterCall(io, file);
    }
    try pacer.finish(io, file);
}

fn enableRing(r: *Ring) Fail!void {
    if (!r.disabled) return;
    switch (posix.errno(linux.io_uring_register(r.ring.fd, .REGISTER_ENABLE_RINGS, null, 0))) {
        .SUCCESS => r.disabled = false,
        else => |e| return failWith(Failure.ofErrno("io_uring_register(ENABLE_RINGS)", @backingInt(e))),
    }
}

/// Queues the write of `request` in `slot`.
fn queueWrite(r: *Ring, fd: posix.fd_t, slot: usize, request: Request) Fail!void {
    const len = @min(request.bytes.len, max_request);
    _ = r.ring.write(slot, fd, request.bytes[0..len], request.offset) catch |err|
        return failWith(Failure.of("io_uring queue a write", err));
    r.owed[slot] = request;
}

/// Writes the part in requests of `chunk` bytes, keeping up to `qd` in flight. A short
/// completion is resubmitted for the rest; a finished request is never submitted again.
/// After a failure nothing new is issued, but what is in flight is reaped, so no request
/// outlives the call; the first failure is returned.
fn uringSpan(run: *Run, index: usize) Fail!void {
    const part = run.case.parts[index];
    const fd = run.files[part.file].handle;
    const r = &run.rings[index];
    const chunk = run.case.chunk;
    const bytes = source[part.src..][0..part.len];
    var next: usize = 0;
    var in_flight: usize = 0;
    var failure: ?Failure = null;
    while (true) {
        while (failure == null and next < bytes.len and r.free_len > 0) {
            const n = @min(chunk, bytes.len - next);
            const slot = r.free[r.free_len - 1];
            queueWrite(r, fd, slot, .{ .offset = part.offset + next, .bytes = bytes[next..][0..n] }) catch {
                failure = lastFailure();
                break;
            };
            r.free_len -= 1;
            in_flight += 1;
            next += n;
        }
        if (in_flight == 0) break;
        // Submit what is queued and wait for at least one completion; EINTR: again (the
        // kernel keeps what it has not taken in the shared queue).
        while (true) {
            _ = r.ring.submit_and_wait(1) catch |err| switch (err) {
                error.SignalInterrupt => continue,
                // The ring itself failed: nothing more can be reaped; closing the ring
                // cancels the rest.
                else => return failWith(failure orelse Failure.of("io_uring_enter", err)),
            };
            break;
        }
        const count = r.ring.copy_cqes(r.cqes, 0) catch |err|
            return failWith(failure orelse Failure.of("io_uring_enter", err));
        for (r.cqes[0..count]) |cqe| {
            const slot: usize = @intCast(cqe.user_data);
            const request = r.owed[slot] orelse {
                if (failure == null) failure = .{ .op = "io_uring", .errno = 0, .name = "completion for no request in flight" };
                continue;
            };
            var rest: ?Request = null;
            if (cqe.res < 0) {
                const errno: u32 = @intCast(-cqe.res);
                // EINTR, and EAGAIN (io_uring's "try again"), reissue the same request, as
                // native writebench does; any other error ends the part.
                if (errno == @backingInt(linux.E.INTR) or errno == @backingInt(linux.E.AGAIN)) {
                    rest = request;
                } else if (failure == null) {
                    failure = Failure.ofErrno("io_uring write", errno);
                }
            } else {
                const n: usize = @intCast(cqe.res);
                if (n == 0 or n > request.bytes.len) {
                    if (failure == null) failure = .{ .op = "io_uring write", .errno = 0, .name = if (n == 0) "wrote 0 bytes" else "wrote more than asked" };
                } else if (n < request.bytes.len) {
                    rest = .{ .offset = request.offset + n, .bytes = request.bytes[n..] };
                }
            }
            if (rest != null and failure == null) {
                queueWrite(r, fd, slot, rest.?) catch {
                    failure = lastFailure();
                };
                if (failure == null) continue;
            }
            r.owed[slot] = null;
            r.free[r.free_len] = slot;
            r.free_len += 1;
            in_flight -= 1;
        }
    }
    if (failure) |f| return failWith(f);
}

/// A ring for one writer thread, set up as native writebench (and fio) does where the
/// kernel allows (6.1+): SINGLE_ISSUER + DEFER_TASKRUN run completion work when the
/// writer waits instead of interrupting it, COOP_TASKRUN spares it an IPI; created
/// disabled here and enabled by its writer thread. Older kernels refuse: a plain ring.
fn newRing(gpa: Allocator, qd: usize) Fail!Ring {
    if (qd == 0 or qd > 32768) return failWith(Failure.ofErrno("io_uring_setup", 22));
    const entries: u16 = @intCast(std.math.ceilPowerOfTwoAssert(usize, qd));
    var params = std.mem.zeroInit(linux.io_uring_params, .{
        .flags = linux.IORING_SETUP_R_DISABLED | linux.IORING_SETUP_SINGLE_ISSUER |
            linux.IORING_SETUP_DEFER_TASKRUN | linux.IORING_SETUP_COOP_TASKRUN,
    });
    var disabled = true;
    var ring = IoUring.init_params(entries, &params) catch |err| switch (err) {
        error.ArgumentsInvalid => plain: {
            disabled = false;
            break :plain IoUring.init(entries, 0) catch |e| return failWith(Failure.of("io_uring_setup", e));
        },
        else => return failWith(Failure.of("io_uring_setup", err)),
    };
    errdefer ring.deinit();
    const owed = gpa.alloc(?Request, qd) catch return failWith(Failure.of("allocate", error.OutOfMemory));
    errdefer gpa.free(owed);
    @memset(owed, null);
    const free = gpa.alloc(usize, qd) catch return failWith(Failure.of("allocate", error.OutOfMemory));
    errdefer gpa.free(free);
    for (free, 0..) |*slot, i| slot.* = qd - 1 - i;
    const cqes = gpa.alloc(linux.io_uring_cqe, qd) catch return failWith(Failure.of("allocate", error.OutOfMemory));
    return .{ .ring = ring, .disabled = disabled, .owed = owed, .free = free, .free_len = qd, .cqes = cqes };
}

fn freeRing(gpa: Allocator, r: *Ring) void {
    r.ring.deinit();
    gpa.free(r.owed);
    gpa.free(r.free);
    gpa.free(r.cqes);
}

fn openFile(path: []const u8, flags: posix.O) Fail!File {
    // Open flags std.Io.Dir.openFile does not offer: posix.openat, then an Io.File.
    const fd = posix.openat(posix.AT.FDCWD, path, flags, 0) catch |err| return failWith(Failure.of("open", err));
    return .{ .handle = fd, .flags = .{ .nonblocking = false } };
}

fn openFlags(base: posix.O, open: posix.O) posix.O {
    var flags = open;
    flags.ACCMODE = base.ACCMODE;
    flags.CLOEXEC = true;
    return flags;
}

const Out = *Io.Writer;

fn runCase(io: Io, gpa: Allocator, out: Out, c: *const Case, number: i64, paths: []const []const u8) !void {
    if (c.refusal) |f| return replyError(out, number, f);
    if (paths.len != c.files) return replyError(out, number, .{ .op = "run", .errno = 0, .name = "wrong number of file lines" });
    populateSource() catch return replyError(out, number, lastFailure());

    // 1. Open the files (untimed), then the method's set-up, timed apart.
    const files = try gpa.alloc(File, c.files);
    defer gpa.free(files);
    var opened: usize = 0;
    defer for (files[0..opened]) |f| f.close(io);
    for (paths, 0..) |path, i| {
        files[i] = openFile(path, openFlags(.{ .ACCMODE = .WRONLY }, c.open)) catch return replyError(out, number, lastFailure());
        opened += 1;
    }
    const setup_started = now(io);
    const rings = try gpa.alloc(Ring, if (c.method == .io_uring) c.threads else 0);
    defer gpa.free(rings);
    var made: usize = 0;
    defer for (rings[0..made]) |*r| freeRing(gpa, r);
    for (rings) |*r| {
        r.* = newRing(gpa, c.qd) catch return replyError(out, number, lastFailure());
        made += 1;
    }
    const setup = @as(f64, @floatFromInt(now(io).nanoseconds - setup_started.nanoseconds)) / 1e9;

    const results = try gpa.alloc(PartResult, c.threads);
    defer gpa.free(results);
    @memset(results, .{});
    var run: Run = .{
        .io = io,
        .case = c,
        .files = files,
        .rings = rings,
        .pacing = .{ .every = c.every, .call = c.everycall, .writers = c.threads, .shared_file = c.files == 1 },
        .line = .{ .waiting = c.threads },
        .results = results,
        .own_sync = c.end != null and c.files > 1,
    };

    // 2.-3. The writers: the calling thread when there is one part, else a thread per part.
    if (c.threads == 1) {
        const placed = Placed.place(0);
        placed.release();
        if (c.method == .io_uring) enableRing(&rings[0]) catch return replyError(out, number, lastFailure());
        writePart(&run, 0);
    } else {
        const threads = try gpa.alloc(std.Thread, c.threads);
        defer gpa.free(threads);
        var spawned: usize = 0;
        var spawn_failure: ?Failure = null;
        for (0..c.threads) |i| {
            // A small stack: the writers keep nothing on it.
            threads[i] = std.Thread.spawn(.{ .stack_size = 256 * 1024 }, writerThread, .{ &run, i }) catch |err| {
                spawn_failure = Failure.of("start a writer thread", err);
                run.line.callOff(io);
                break;
            };
            spawned += 1;
        }
        for (threads[0..spawned]) |t| t.join();
        if (spawn_failure) |f| return replyError(out, number, f);
    }
    for (results) |r| if (r.failure) |f| return replyError(out, number, f);

    // 4. One file and an `end` mode: the main thread syncs every file after every part.
    const cpu = Cpu.ofThisThread();
    var sync: ?[2]f64 = null;
    if (c.end) |call| if (c.files == 1) {
        const start = seconds(now(io));
        for (files) |f| syncFile(io, f, call) catch return replyError(out, number, lastFailure());
        sync = .{ start, seconds(now(io)) };
    };
    // 5. Rings go before the timed close (they hold no data of the files).
    for (rings[0..made]) |*r| freeRing(gpa, r);
    made = 0;
    const close_start = seconds(now(io));
    for (files[0..opened]) |f| f.close(io);
    opened = 0;
    const close = [2]f64{ close_start, seconds(now(io)) };
    const main_cpu = Cpu.ofThisThread().since(cpu);

    // 6. The reply.
    try out.print("{{\"run\":{d},\"setup\":{d:.9},\"parts\":[", .{ number, setup });
    for (results, 0..) |r, i| {
        if (i > 0) try out.writeAll(",");
        try out.print("{{\"start\":{d:.9},\"end\":{d:.9},\"synced\":", .{ r.start, r.end });
        if (r.synced) |s| try out.print("{d:.9}", .{s}) else try out.writeAll("null");
        try out.print(",\"user\":{d:.6},\"sys\":{d:.6}}}", .{ r.cpu.user, r.cpu.sys });
    }
    try out.writeAll("],\"sync\":");
    if (sync) |s| try out.print("[{d:.9},{d:.9}]", .{ s[0], s[1] }) else try out.writeAll("null");
    try out.print(",\"close\":[{d:.9},{d:.9}],\"user\":{d:.6},\"sys\":{d:.6}}}\n", .{ close[0], close[1], main_cpu.user, main_cpu.sys });
    try out.flush();
}

fn runLatency(io: Io, out: Out, l: *const Latency, number: i64, paths: []const []const u8) !void {
    if (paths.len != 1) return replyError(out, number, .{ .op = "run", .errno = 0, .name = "wrong number of file lines" });
    populateSource() catch return replyError(out, number, lastFailure());
    const placed = Placed.place(0);
    placed.release();
    const file = openFile(paths[0], openFlags(.{ .ACCMODE = .WRONLY }, l.open)) catch return replyError(out, number, lastFailure());
    defer file.close(io);
    const bytes = source[0..l.bytes];
    var pacing: Pacing = .{ .every = l.every, .call = l.everycall, .writers = 1, .shared_file = true };
    var pacer: Pacer = .{ .pacing = &pacing };
    var recorded: usize = 0;
    var synced_count: usize = 0;
    var cpu = Cpu.ofThisThread();
    var loop_started = now(io);
    var i: u64 = 0;
    while (i < l.count) : (i += 1) {
        if (i == l.warmup) {
            cpu = Cpu.ofThisThread();
            loop_started = now(io);
        }
        const started = now(io);
        (switch (l.pattern) {
            .overwrite0 => pwriteAll(io, file, bytes, 0),
            .append => writeAll(io, file, bytes),
        }) catch return replyError(out, number, lastFailure());
        const written = now(io);
        var synced: ?Io.Timestamp = null;
        if (pacer.due()) {
            syncFile(io, file, l.everycall) catch return replyError(out, number, lastFailure());
            synced = now(io);
        }
        if (i >= l.warmup) {
            l.ops[recorded] = nanosBetween(started, synced orelse written);
            recorded += 1;
            if (synced) |s| {
                l.syncs[synced_count] = nanosBetween(written, s);
                synced_count += 1;
            }
        }
    }
    const loop_ended = now(io);
    var sync: ?[2]f64 = null;
    if (l.end) |call| {
        syncFile(io, file, call) catch return replyError(out, number, lastFailure());
        sync = .{ seconds(loop_ended), seconds(now(io)) };
    }
    const used = Cpu.ofThisThread().since(cpu);

    try out.print("{{\"run\":{d},\"loop\":[{d:.9},{d:.9}],\"ops\":[", .{ number, seconds(loop_started), seconds(loop_ended) });
    for (l.ops[0..recorded], 0..) |op, k| {
        if (k > 0) try out.writeAll(",");
        try out.print("{d}", .{op});
    }
    try out.writeAll("],\"syncs\":[");
    for (l.syncs[0..synced_count], 0..) |s, k| {
        if (k > 0) try out.writeAll(",");
        try out.print("{d}", .{s});
    }
    try out.writeAll("],\"sync\":");
    if (sync) |s| try out.print("[{d:.9},{d:.9}]", .{ s[0], s[1] }) else try out.writeAll("null");
    try out.print(",\"user\":{d:.6},\"sys\":{d:.6}}}\n", .{ used.user, used.sys });
    try out.flush();
}

fn replyError(out: Out, number: i64, f: Failure) !void {
    try out.print("{{\"run\":{d},\"error\":", .{number});
    var text_buf: [512]u8 = undefined;
    const text = std.fmt.bufPrint(&text_buf, "{s}: {s}", .{ f.op, f.text() }) catch f.op;
    try std.json.Stringify.encodeJsonString(text, .{}, out);
    try out.print(",\"errno\":{d}}}\n", .{f.errno});
    try out.flush();
}

// ---------------------------------------------------------------- parsing

const ParseError = error{Parse};

fn parseInt(comptime T: type, s: []const u8) ParseError!T {
    return std.fmt.parseInt(T, s, 10) catch error.Parse;
}

fn parseSyncCall(s: []const u8) ParseError!SyncCall {
    return std.meta.stringToEnum(SyncCall, s) orelse error.Parse;
}

fn parseEnd(s: []const u8) ParseError!?SyncCall {
    if (std.mem.eql(u8, s, "none")) return null;
    return try parseSyncCall(s);
}

/// `-` or a comma-separated list of sync, dsync, direct.
fn parseOpen(s: []const u8) ParseError!posix.O {
    var flags: posix.O = .{};
    if (std.mem.eql(u8, s, "-")) return flags;
    var it = std.mem.splitScalar(u8, s, ',');
    while (it.next()) |word| {
        if (std.mem.eql(u8, word, "sync")) {
            flags.SYNC = true;
            flags.DSYNC = true; // O_SYNC is __O_SYNC|O_DSYNC on Linux, as libc's O_SYNC
        } else if (std.mem.eql(u8, word, "dsync")) {
            flags.DSYNC = true;
        } else if (std.mem.eql(u8, word, "direct")) {
            flags.DIRECT = true;
        } else return error.Parse;
    }
    return flags;
}

/// The value of `key=` among the words of a header line.
fn field(words: []const []const u8, key: []const u8) ParseError![]const u8 {
    for (words) |w| {
        if (w.len > key.len and std.mem.startsWith(u8, w, key) and w[key.len] == '=') return w[key.len + 1 ..];
    }
    return error.Parse;
}

fn splitWords(line: []const u8, buf: [][]const u8) ParseError![]const []const u8 {
    var n: usize = 0;
    var it = std.mem.tokenizeScalar(u8, line, ' ');
    while (it.next()) |w| {
        if (n == buf.len) return error.Parse;
        buf[n] = w;
        n += 1;
    }
    return buf[0..n];
}

fn parseCase(gpa: Allocator, line: []const u8, in: *Io.Reader, out: Out) !Case {
    var buf: [32][]const u8 = undefined;
    const words = try splitWords(line, &buf);
    const method = std.meta.stringToEnum(Method, try field(words, "method")) orelse return error.Parse;
    const threads = try parseInt(usize, try field(words, "threads"));
    const files = try parseInt(usize, try field(words, "files"));
    const src_len = try parseInt(usize, try field(words, "source"));
    var c: Case = .{
        .method = method,
        .threads = threads,
        .chunk = try parseInt(usize, try field(words, "chunk")),
        .qd = try parseInt(usize, try field(words, "qd")),
        .files = files,
        .open = try parseOpen(try field(words, "open")),
        .end = try parseEnd(try field(words, "end")),
        .every = try parseInt(u64, try field(words, "every")),
        .everycall = try parseSyncCall(try field(words, "everycall")),
        .parts = &.{},
    };
    _ = try parseInt(usize, try field(words, "iov")); // no vectored method here
    if (threads == 0 or files == 0 or c.chunk == 0 or (files != 1 and files != threads)) return error.Parse;
    const parts = try gpa.alloc(Part, threads);
    errdefer gpa.free(parts);
    for (parts) |*p| {
        const part_line = (in.takeDelimiter('\n') catch return error.Parse) orelse return error.Parse;
        p.* = parsePart(part_line, files, src_len) catch protocolError(out, part_line);
    }
    c.parts = parts;
    mapSource(src_len) catch {
        c.refusal = lastFailure();
    };
    if (method == .io_uring and c.every > 0) {
        // As native writebench: a sync every N writes would have to drain the writes in
        // flight (IOSQE_IO_DRAIN or linked fsyncs), which changes what is measured.
        c.refusal = .{ .op = "io_uring", .errno = 0, .name = "every:N is not implemented (a sync must drain the writes in flight)" };
    }
    if (method == .write and threads > 1 and files == 1) {
        c.refusal = .{ .op = "write", .errno = 0, .name = "writes at the file position need a file per thread" };
    }
    return c;
}

fn parsePart(line: []const u8, files: usize, src_len: usize) ParseError!Part {
    var buf: [8][]const u8 = undefined;
    const w = try splitWords(line, &buf);
    if (w.len != 5 or !std.mem.eql(u8, w[0], "part")) return error.Parse;
    const p: Part = .{ .file = try parseInt(usize, w[1]), .offset = try parseInt(u64, w[2]), .len = try parseInt(u64, w[3]), .src = try parseInt(usize, w[4]) };
    if (p.file >= files or p.src > src_len or p.len > src_len - p.src) return error.Parse;
    return p;
}

fn parseLatency(gpa: Allocator, line: []const u8) !Latency {
    var buf: [32][]const u8 = undefined;
    const words = try splitWords(line, &buf);
    const method = std.meta.stringToEnum(Method, try field(words, "method")) orelse return error.Parse;
    const pattern = std.meta.stringToEnum(Pattern, try field(words, "pattern")) orelse return error.Parse;
    // overwrite0 is pwrite at offset 0, append is write at the file position.
    if (!((method == .pwrite and pattern == .overwrite0) or (method == .write and pattern == .append))) return error.Parse;
    const count = try parseInt(u64, try field(words, "count"));
    const warmup = try parseInt(u64, try field(words, "warmup"));
    const bytes = try parseInt(usize, try field(words, "bytes"));
    const src_len = try parseInt(usize, try field(words, "source"));
    if (bytes == 0 or bytes > src_len) return error.Parse;
    // count is the operations recorded; warmup more come first (as native does).
    const recorded: usize = @intCast(count);
    const ops = try gpa.alloc(u64, recorded);
    errdefer gpa.free(ops);
    const syncs = try gpa.alloc(u64, recorded);
    errdefer gpa.free(syncs);
    const l: Latency = .{
        .pattern = pattern,
        .bytes = bytes,
        .count = count + warmup,
        .warmup = warmup,
        .open = try parseOpen(try field(words, "open")),
        .end = try parseEnd(try field(words, "end")),
        .every = try parseInt(u64, try field(words, "every")),
        .everycall = try parseSyncCall(try field(words, "everycall")),
        .ops = ops,
        .syncs = syncs,
    };
    try mapSource(src_len);
    return l;
}

fn protocolError(out: Out, line: []const u8) noreturn {
    out.writeAll("{\"run\":-1,\"error\":") catch {};
    var text_buf: [1024]u8 = undefined;
    const shown = line[0..@min(line.len, 900)];
    const text = std.fmt.bufPrint(&text_buf, "cannot parse: {s}", .{shown}) catch "cannot parse";
    std.json.Stringify.encodeJsonString(text, .{}, out) catch {};
    out.writeAll(",\"errno\":0}\n") catch {};
    out.flush() catch {};
    std.process.exit(2);
}

// ---------------------------------------------------------------- main

/// A new `case` or `latency` line replaces the one before (the protocol sends one).
fn freeCommands(gpa: Allocator, case: *?Case, latency: *?Latency) void {
    if (case.*) |c| gpa.free(c.parts);
    if (latency.*) |l| {
        gpa.free(l.ops);
        gpa.free(l.syncs);
    }
    case.* = null;
    latency.* = null;
}

pub fn main(init: std.process.Init) !void {
    const io = init.io;
    const gpa = init.gpa;
    origin = now(io);

    var out_buf: [64 * 1024]u8 = undefined;
    var stdout = File.stdout().writerStreaming(io, &out_buf);
    const out = &stdout.interface;
    var in_buf: [64 * 1024]u8 = undefined;
    var stdin = File.stdin().readerStreaming(io, &in_buf);
    const in = &stdin.interface;

    try out.print("{{\"runner\":\"zig\",\"protocol\":{d},\"version\":\"Zig {s}\",\"methods\":[", .{ protocol_version, builtin.zig_version_string });
    for (method_names, 0..) |name, i| try out.print("{s}\"{s}\"", .{ if (i > 0) "," else "", name });
    try out.writeAll("]}\n");
    try out.flush();

    var case: ?Case = null;
    var latency: ?Latency = null;
    var paths: std.ArrayList([]const u8) = .empty;
    var run_number: ?i64 = null;

    while (true) {
        const raw = in.takeDelimiter('\n') catch |err| switch (err) {
            error.StreamTooLong => protocolError(out, "(a line longer than 64 KiB)"),
            error.ReadFailed => return err,
        } orelse break;
        const line = std.mem.trimEnd(u8, raw, "\r");
        if (line.len == 0) continue;
        if (std.mem.eql(u8, line, "quit")) break;
        if (std.mem.startsWith(u8, line, "case ")) {
            // Copy: the reader's buffer is reused by the part lines.
            const copy = try gpa.dupe(u8, line);
            defer gpa.free(copy);
            freeCommands(gpa, &case, &latency);
            case = parseCase(gpa, copy, in, out) catch protocolError(out, copy);
        } else if (std.mem.startsWith(u8, line, "latency ")) {
            freeCommands(gpa, &case, &latency);
            latency = parseLatency(gpa, line) catch protocolError(out, line);
        } else if (std.mem.startsWith(u8, line, "run ")) {
            if (case == null and latency == null) protocolError(out, line);
            run_number = parseInt(i64, line["run ".len..]) catch protocolError(out, line);
            run_ncpus = 0;
            for (paths.items) |p| gpa.free(p);
            paths.clearRetainingCapacity();
        } else if (std.mem.startsWith(u8, line, "cpus ")) {
            if (run_number == null) protocolError(out, line);
            run_ncpus = 0;
            var words = std.mem.tokenizeScalar(u8, line["cpus ".len..], ' ');
            while (words.next()) |word| {
                if (run_ncpus == run_cpus.len) protocolError(out, line);
                const cpu = parseInt(usize, word) catch protocolError(out, line);
                if (cpu >= run_cpus.len) protocolError(out, line);
                run_cpus[run_ncpus] = cpu;
                run_ncpus += 1;
            }
            if (run_ncpus == 0) protocolError(out, line);
        } else if (std.mem.startsWith(u8, line, "file ")) {
            if (run_number == null) protocolError(out, line);
            try paths.append(gpa, try gpa.dupe(u8, line["file ".len..]));
        } else if (std.mem.eql(u8, line, "go")) {
            const number = run_number orelse protocolError(out, line);
            if (case) |*c| {
                try runCase(io, gpa, out, c, number, paths.items);
            } else if (latency) |*l| {
                try runLatency(io, out, l, number, paths.items);
            }
            run_number = null;
        } else protocolError(out, line);
    }
    try out.flush();
}
