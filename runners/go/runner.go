// Command runner is writebench's Go runner (`--runtimes go`): it writes the parts
// writebench hands it from the source memfd on fd 3 and times them; writebench
// prepares the files, verifies every byte and does the statistics. The line protocol
// on stdin/stdout is docs/runtimes.md.
//
// Methods: write (os.File.Write of chunks), pwrite (os.File.WriteAt, one goroutine per
// part sharing one *os.File per file), bufio (bufio.Writer over the *os.File, flushed
// at the end of the part), io_uring (IORING_OP_WRITE at explicit offsets, qd requests
// in flight, one ring per part, raw syscalls through golang.org/x/sys/unix). Latency:
// pwrite (overwrite0), write and bufio (append).
//
// Build: CGO_ENABLED=0 go build -trimpath -o runner .   (in this directory; the module
// needs golang.org/x/sys only). Run: ./runner with the source memfd as fd 3.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/sys/unix"
)

const sourceFD = 3

var methods = []string{"write", "pwrite", "bufio", "io_uring"}

// One origin per process; time.Now carries a monotonic reading, so differences from
// it are monotonic.
var origin = time.Now()

func now() float64 { return time.Since(origin).Seconds() }

func init() {
	// The main goroutine stays on the main thread, so RUSAGE_THREAD reads are its own
	// (threads=1 writes there, and the main thread syncs and closes).
	runtime.LockOSThread()
}

// cpuClock is a reading of this OS thread's CPU clocks; callers are locked to their thread.
type cpuClock struct{ user, sys, total float64 }

// threadCPU reads getrusage's user and system time and the thread's CPU clock. The clock
// is exact; getrusage moves in ticks and lags for a running thread, so only its split is
// used (cpuSince).
func threadCPU() cpuClock {
	var c cpuClock
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) == nil {
		c.user = float64(ru.Utime.Sec) + float64(ru.Utime.Usec)*1e-6
		c.sys = float64(ru.Stime.Sec) + float64(ru.Stime.Usec)*1e-6
	}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) == nil {
		c.total = float64(ts.Sec) + float64(ts.Nsec)*1e-9
	}
	return c
}

// cpuSince is the user and system time since before: the clock's total, divided as
// getrusage divides its own deltas (all system time where they did not move), as
// writebench does for native.
func cpuSince(after, before cpuClock) (user, sys float64) {
	total := max(0, after.total-before.total)
	u, s := max(0, after.user-before.user), max(0, after.sys-before.sys)
	if u+s > 0 {
		user = total * (u / (u + s)) // the share first: never above total
	}
	return user, max(0, total-user)
}

// runCPUs is the run's cpus line: the CPU each writer starts on, or nil.
var runCPUs []int

// place moves this OS thread (the caller is locked to it), writer i, to its CPU before
// the start line, and returns the CPUs it may use, to give back after it. A courtesy, as
// in writebench: where the kernel refuses, the run goes on unplaced.
func place(i int) (unix.CPUSet, bool) {
	var before unix.CPUSet
	if i >= len(runCPUs) || unix.SchedGetaffinity(0, &before) != nil {
		return before, false
	}
	var one unix.CPUSet
	one.Set(runCPUs[i])
	return before, unix.SchedSetaffinity(0, &one) == nil
}

// release lets the thread run anywhere again after the start line.
func release(before unix.CPUSet, placed bool) {
	if placed {
		_ = unix.SchedSetaffinity(0, &before)
	}
}

// ---- errors: "call: Reason" and the errno, as the reply's error line carries them ----

type runError struct {
	msg   string
	errno int
}

func fail(call string, err error) *runError {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		// Go spells strerror in lower case; the other runners print the C library's.
		text := errno.Error()
		r, size := utf8.DecodeRuneInString(text)
		return &runError{call + ": " + string(unicode.ToUpper(r)) + text[size:], int(errno)}
	}
	return &runError{call + ": " + err.Error(), 0}
}

func failf(errno int, format string, args ...any) *runError {
	return &runError{fmt.Sprintf(format, args...), errno}
}

// ---- the case, as the `case`/`latency` and `part` lines describe it ----

type part struct {
	file                int
	offset, length, src int64
}

type job struct {
	latency        bool
	method         string
	threads, files int
	iov, qd        int
	chunk          int64
	openFlags      int
	end, everyCall string // "fsync", "fdatasync" ("none" for end)
	every          uint64
	source         int64
	parts          []part
	overwrite0     bool // latency pattern, else append
	bytes          int64
	count, warmup  int
}

// source is fd 3 mapped read-only and shared once, at start; sourceErr says why not.
var (
	source    []byte
	sourceErr *runError
)

func mapSource() {
	var st unix.Stat_t
	if err := unix.Fstat(sourceFD, &st); err != nil {
		sourceErr = fail("fstat of the source (fd 3)", err)
		return
	}
	if st.Size == 0 {
		return
	}
	m, err := unix.Mmap(sourceFD, 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		sourceErr = fail("mmap of the source (fd 3)", err)
		return
	}
	source = m
}

// populateSource faults the source into our map before any clock starts: writebench
// refills it before each run, so a part's first touches would otherwise fault inside
// its span (a native writer's buffer is warm).
func populateSource() *runError {
	if len(source) == 0 {
		return nil
	}
	err := unix.Madvise(source, unix.MADV_POPULATE_READ)
	for err == unix.EINTR {
		err = unix.Madvise(source, unix.MADV_POPULATE_READ)
	}
	if err == nil {
		return nil
	}
	if err != unix.EINVAL { // EINVAL: before Linux 5.14; touch every page instead
		return fail("madvise(MADV_POPULATE_READ) of the source", err)
	}
	var sink byte
	for i := 0; i < len(source); i += os.Getpagesize() {
		sink ^= source[i]
	}
	_ = sink
	return nil
}

// ---- every:N, counted across the case's threads (docs/runtimes.md) ----

type pacing struct {
	every   uint64
	calls   atomic.Uint64
	ended   atomic.Int64
	writers int64
	shared  bool // one file for every part
}

type pacer struct {
	p     *pacing
	since uint64 // this writer's calls since it last synced
}

// due counts one call of the case: true when this writer must sync its file now.
func (pc *pacer) due() bool {
	if pc.p.every == 0 {
		return false
	}
	pc.since++
	if pc.p.calls.Add(1)%pc.p.every == 0 {
		pc.since = 0
		return true
	}
	return false
}

// atEnd is asked once as a part ends: true when this writer must sync the calls not
// yet synced (in one file the last writer to end; with a file each, its own writer).
func (pc *pacer) atEnd() bool {
	if pc.p.every == 0 {
		return false
	}
	if !pc.p.shared {
		return pc.since > 0
	}
	last := pc.p.ended.Add(1) == pc.p.writers
	return last && pc.p.calls.Load()%pc.p.every != 0
}

// syncFile is fsync (File.Sync) or fdatasync (x/sys; EINTR retried as File.Sync does).
func syncFile(f *os.File, fd int, call string) *runError {
	if call == "fsync" {
		if err := f.Sync(); err != nil {
			return fail("fsync", err)
		}
		return nil
	}
	for {
		err := unix.Fdatasync(fd)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fail("fdatasync", err)
		}
		return nil
	}
}

// ---- a run of a case ----

type times struct {
	start, end, synced float64
	hasSynced          bool
	user, sys          float64
}

type run struct {
	job     *job
	files   []*os.File
	fds     []int
	writers []*bufio.Writer // bufio: one per part
	rings   []*ring         // io_uring: one per part
	pacing  pacing
	ownSync bool // a file per thread and an end sync: each writer syncs its own file
	times   []times
	errs    []*runError
}

// writePart writes part i and times it; with a barrier it first waits for the others.
func (r *run) writePart(i int, ready *sync.WaitGroup, start <-chan struct{}) {
	if ready != nil {
		// Locked so that the thread's CPU time is this writer's and nothing else runs
		// here (threads=1 writes on the main goroutine, locked to the main thread).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	before, placed := place(i)
	if ready != nil {
		ready.Done()
		<-start
	}
	release(before, placed)
	p := r.job.parts[i]
	f, fd := r.files[p.file], r.fds[p.file]
	pc := pacer{p: &r.pacing}
	t := &r.times[i]
	c0 := threadCPU()
	t.start = now()
	var e *runError
	switch r.job.method {
	case "write", "pwrite":
		e = r.writePlain(p, f, fd, &pc)
	case "bufio":
		e = r.writeBuffered(p, r.writers[i], f, fd, &pc)
	case "io_uring":
		e = r.rings[i].drive(p, fd, r.job.chunk)
	}
	t.end = now()
	if e == nil && r.ownSync {
		e = syncFile(f, fd, r.job.end)
		t.synced, t.hasSynced = now(), true
	}
	t.user, t.sys = cpuSince(threadCPU(), c0)
	r.errs[i] = e
}

// writePlain: one call per chunk. os.File.Write and WriteAt already loop over short
// writes and retry EINTR (internal/poll), so each call here writes its whole chunk or
// fails.
func (r *run) writePlain(p part, f *os.File, fd int, pc *pacer) *runError {
	src := source[p.src : p.src+p.length]
	positional := r.job.method == "pwrite"
	for off := int64(0); off < p.length; off += r.job.chunk {
		b := src[off:min(off+r.job.chunk, p.length)]
		var err error
		if positional {
			_, err = f.WriteAt(b, p.offset+off)
		} else {
			_, err = f.Write(b)
		}
		if err != nil {
			return fail(r.job.method, err)
		}
		if pc.due() {
			if e := syncFile(f, fd, r.job.everyCall); e != nil {
				return e
			}
		}
	}
	if pc.atEnd() {
		return syncFile(f, fd, r.job.everyCall)
	}
	return nil
}

// writeBuffered: bufio.Writer.Write of chunks, Flush at the end (inside the span, as
// closing would); a sync is Flush, then the sync call.
func (r *run) writeBuffered(p part, w *bufio.Writer, f *os.File, fd int, pc *pacer) *runError {
	src := source[p.src : p.src+p.length]
	for off := int64(0); off < p.length; off += r.job.chunk {
		if _, err := w.Write(src[off:min(off+r.job.chunk, p.length)]); err != nil {
			return fail("bufio write", err)
		}
		if pc.due() {
			if err := w.Flush(); err != nil {
				return fail("bufio flush", err)
			}
			if e := syncFile(f, fd, r.job.everyCall); e != nil {
				return e
			}
		}
	}
	if err := w.Flush(); err != nil {
		return fail("bufio flush", err)
	}
	if pc.atEnd() {
		return syncFile(f, fd, r.job.everyCall)
	}
	return nil
}

// check refuses what this runner cannot do with the case, before anything is opened.
func (j *job) check(paths []string) *runError {
	if sourceErr != nil {
		return sourceErr
	}
	switch {
	case j.source > int64(len(source)):
		return failf(0, "source=%d but the memfd on fd 3 holds %d bytes", j.source, len(source))
	case len(paths) != j.files:
		return failf(0, "%d file lines, files=%d", len(paths), j.files)
	}
	if j.latency {
		ok := (j.method == "pwrite" && j.overwrite0) || ((j.method == "write" || j.method == "bufio") && !j.overwrite0)
		if !ok {
			return failf(0, "the go runner's latency methods are pwrite (overwrite0), write and bufio (append), not %s", j.method)
		}
		if j.files != 1 || j.bytes > j.source {
			return failf(0, "latency needs one file and bytes <= source (files=%d, bytes=%d, source=%d)", j.files, j.bytes, j.source)
		}
		return nil
	}
	known := false
	for _, m := range methods {
		known = known || m == j.method
	}
	if !known {
		return failf(0, "the go runner has no method %s (it has %s)", j.method, strings.Join(methods, ", "))
	}
	if j.method == "io_uring" && j.every > 0 {
		// As native: a sync every N writes would have to drain the writes in flight.
		return failf(int(unix.EOPNOTSUPP), "io_uring: every:N is not implemented (a sync must drain the writes in flight)")
	}
	if len(j.parts) != j.threads || j.threads < 1 {
		return failf(0, "%d part lines, threads=%d", len(j.parts), j.threads)
	}
	users := make([]int, j.files)
	for _, p := range j.parts {
		if p.file < 0 || p.file >= j.files || p.offset < 0 || p.length < 0 || p.src < 0 || p.src+p.length > j.source {
			return failf(0, "part %d %d %d %d lies outside the files or the source", p.file, p.offset, p.length, p.src)
		}
		users[p.file]++
	}
	sequential := j.method == "write" || j.method == "bufio"
	for _, n := range users {
		if sequential && n > 1 {
			return failf(0, "%s writes at the file position: it needs a file per thread", j.method)
		}
	}
	return nil
}

// open opens every file without truncating it, with the case's flags.
func openFiles(paths []string, flags int) ([]*os.File, []int, *runError) {
	files := make([]*os.File, 0, len(paths))
	fds := make([]int, 0, len(paths))
	for _, path := range paths {
		f, err := os.OpenFile(path, os.O_WRONLY|flags, 0)
		if err != nil {
			for _, g := range files {
				g.Close()
			}
			return nil, nil, fail("open", err)
		}
		files = append(files, f)
		// The descriptor for fdatasync and io_uring, read once here (Fd is not free).
		fds = append(fds, int(f.Fd()))
	}
	return files, fds, nil
}

// prepareRun is every run's untimed start: the file lines checked against the case,
// the source faulted in, the files opened.
func prepareRun(j *job, paths []string) ([]*os.File, []int, *runError) {
	if e := j.check(paths); e != nil {
		return nil, nil, e
	}
	if e := populateSource(); e != nil {
		return nil, nil, e
	}
	return openFiles(paths, j.openFlags)
}

func runCase(j *job, id int64, paths []string, out *bufio.Writer) {
	files, fds, e := prepareRun(j, paths)
	if e != nil {
		replyError(out, id, e)
		return
	}
	r := &run{job: j, files: files, fds: fds, times: make([]times, j.threads), errs: make([]*runError, j.threads)}
	r.pacing = pacing{every: j.every, writers: int64(j.threads), shared: j.files == 1}
	r.ownSync = j.end != "none" && j.files > 1
	// Sequential methods write at the file position: place it, untimed.
	if j.method == "write" || j.method == "bufio" {
		for _, p := range j.parts {
			if _, err := files[p.file].Seek(p.offset, 0); err != nil && e == nil {
				e = fail("lseek", err)
			}
		}
	}
	setupStart := now()
	switch j.method {
	case "bufio":
		// The default size (4096), as most Go programs use it, like stdio's st_blksize
		// buffer in the C runner's fwrite; chunks of at least the buffer go straight
		// through from the source without a copy.
		for _, p := range j.parts {
			r.writers = append(r.writers, bufio.NewWriter(files[p.file]))
		}
	case "io_uring":
		for range j.parts {
			if e != nil {
				break
			}
			var g *ring
			if g, e = newRing(j.qd); e == nil {
				r.rings = append(r.rings, g)
			}
		}
	}
	setup := now() - setupStart

	var syncSpan, closeSpan [2]float64
	synced := false
	var mainUser, mainSys float64
	if e == nil {
		if j.threads == 1 {
			r.writePart(0, nil, nil) // the calling thread, as the protocol says
		} else {
			var ready, done sync.WaitGroup
			start := make(chan struct{})
			ready.Add(j.threads)
			done.Add(j.threads)
			for i := range j.parts {
				go func() { defer done.Done(); r.writePart(i, &ready, start) }()
			}
			ready.Wait()
			close(start) // the barrier: every writer is on its thread and waiting
			done.Wait()
		}
		for _, pe := range r.errs {
			if pe != nil && e == nil {
				e = pe
			}
		}
		c0 := threadCPU()
		if e == nil && j.end != "none" && !r.ownSync {
			syncSpan[0] = now()
			for f := range files {
				if e == nil {
					e = syncFile(files[f], fds[f], j.end)
				}
			}
			syncSpan[1] = now()
			synced = true
		}
		closeSpan[0] = now()
		for _, f := range files {
			if err := f.Close(); err != nil && e == nil {
				e = fail("close", err)
			}
		}
		files = nil
		closeSpan[1] = now()
		mainUser, mainSys = cpuSince(threadCPU(), c0)
	}
	// After a failed set-up, and the rings in any case: untimed teardown.
	for _, f := range files {
		f.Close()
	}
	for _, g := range r.rings {
		g.close()
	}
	if e != nil {
		replyError(out, id, e)
		return
	}
	b := fmt.Appendf(nil, `{"run":%d,"setup":%.9f,"parts":[`, id, setup)
	for i, t := range r.times {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"start":%.9f,"end":%.9f,"synced":`, t.start, t.end)
		if t.hasSynced {
			b = fmt.Appendf(b, "%.9f", t.synced)
		} else {
			b = append(b, "null"...)
		}
		b = fmt.Appendf(b, `,"user":%.6f,"sys":%.6f}`, t.user, t.sys)
	}
	b = append(b, `],"sync":`...)
	if synced {
		b = fmt.Appendf(b, "[%.9f,%.9f]", syncSpan[0], syncSpan[1])
	} else {
		b = append(b, "null"...)
	}
	b = fmt.Appendf(b, `,"close":[%.9f,%.9f],"user":%.6f,"sys":%.6f}`, closeSpan[0], closeSpan[1], mainUser, mainSys)
	reply(out, b)
}

// ---- latency: each operation timed alone, on the main thread ----

func runLatency(j *job, id int64, paths []string, out *bufio.Writer) {
	files, fds, e := prepareRun(j, paths)
	if e != nil {
		replyError(out, id, e)
		return
	}
	f, fd := files[0], fds[0]
	// Allocated before the loop, so the loop allocates nothing.
	ops := make([]int64, 0, j.count)
	syncs := make([]int64, 0, j.count)
	var w *bufio.Writer
	if j.method == "bufio" {
		w = bufio.NewWriter(f)
	}
	buf := source[:j.bytes]
	pc := pacer{p: &pacing{every: j.every, writers: 1, shared: true}}
	release(place(0))
	var c0 cpuClock
	var loopStart float64
	for n := 0; n < j.warmup+j.count && e == nil; n++ {
		if n == j.warmup {
			c0 = threadCPU()
			loopStart = now()
		}
		t0 := time.Now()
		var err error
		switch j.method {
		case "pwrite":
			_, err = f.WriteAt(buf, 0)
		case "write":
			_, err = f.Write(buf)
		case "bufio": // the operation is the Write and its Flush
			if _, err = w.Write(buf); err == nil {
				err = w.Flush()
			}
		}
		if err != nil {
			e = fail(j.method, err)
			break
		}
		t1 := time.Now()
		t2 := t1
		if pc.due() {
			if e = syncFile(f, fd, j.everyCall); e != nil {
				break
			}
			t2 = time.Now()
			if n >= j.warmup {
				syncs = append(syncs, t2.Sub(t1).Nanoseconds())
			}
		}
		if n >= j.warmup {
			ops = append(ops, t2.Sub(t0).Nanoseconds())
		}
	}
	if j.count == 0 {
		c0 = threadCPU()
		loopStart = now()
	}
	loopEnd := now()
	var syncSpan [2]float64
	if e == nil && j.end != "none" {
		syncSpan[0] = now()
		e = syncFile(f, fd, j.end)
		syncSpan[1] = now()
	}
	user, sys := cpuSince(threadCPU(), c0)
	if err := f.Close(); err != nil && e == nil {
		e = fail("close", err)
	}
	if e != nil {
		replyError(out, id, e)
		return
	}
	b := fmt.Appendf(nil, `{"run":%d,"loop":[%.9f,%.9f],"ops":[`, id, loopStart, loopEnd)
	b = appendInts(b, ops)
	b = append(b, `],"syncs":[`...)
	b = appendInts(b, syncs)
	b = append(b, `],"sync":`...)
	if j.end != "none" {
		b = fmt.Appendf(b, "[%.9f,%.9f]", syncSpan[0], syncSpan[1])
	} else {
		b = append(b, "null"...)
	}
	b = fmt.Appendf(b, `,"user":%.6f,"sys":%.6f}`, user, sys)
	reply(out, b)
}

func appendInts(b []byte, v []int64) []byte {
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, x, 10)
	}
	return b
}

// ---- replies ----

func reply(out *bufio.Writer, line []byte) {
	out.Write(line)
	out.WriteByte('\n')
	if err := out.Flush(); err != nil {
		os.Exit(1) // writebench is gone
	}
}

func replyError(out *bufio.Writer, id int64, e *runError) {
	msg, _ := json.Marshal(e.msg)
	reply(out, fmt.Appendf(nil, `{"run":%d,"error":%s,"errno":%d}`, id, msg, e.errno))
}

func protocolError(out *bufio.Writer, format string, args ...any) {
	replyError(out, -1, failf(0, format, args...))
	os.Exit(2)
}

// ---- parsing ----

// parseJob reads a `case` or `latency` line's key=value words.
func parseJob(kind string, words []string) (*job, error) {
	kv := map[string]string{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value", w)
		}
		kv[k] = v
	}
	j := &job{latency: kind == "latency", method: kv["method"], iov: 1, qd: 1, threads: 1, files: 1}
	var err error
	num := func(key string, required bool) int64 {
		v, ok := kv[key]
		if !ok {
			if required && err == nil {
				err = fmt.Errorf("%s= is missing", key)
			}
			return -1
		}
		n, perr := strconv.ParseUint(v, 10, 62)
		if perr != nil && err == nil {
			err = fmt.Errorf("%s=%s is not a count", key, v)
		}
		return int64(n)
	}
	call := func(key string, none bool) string {
		v := kv[key]
		if v != "fsync" && v != "fdatasync" && !(none && v == "none") && err == nil {
			err = fmt.Errorf("%s=%q", key, v)
		}
		return v
	}
	if j.method == "" {
		return nil, errors.New("method= is missing")
	}
	if j.latency {
		j.overwrite0 = kv["pattern"] == "overwrite0"
		if p := kv["pattern"]; p != "overwrite0" && p != "append" {
			return nil, fmt.Errorf("pattern=%q", p)
		}
		j.bytes, j.count, j.warmup = num("bytes", true), int(num("count", true)), int(num("warmup", true))
	} else {
		j.threads, j.files, j.chunk = int(num("threads", true)), int(num("files", true)), num("chunk", true)
		if v := num("iov", false); v >= 0 {
			j.iov = int(v)
		}
		if v := num("qd", false); v >= 0 {
			j.qd = int(v)
		}
		if err == nil && (j.chunk < 1 || j.qd < 1) {
			err = errors.New("chunk and qd must be at least 1")
		}
	}
	j.end, j.everyCall = call("end", true), call("everycall", false)
	j.every, j.source = uint64(num("every", true)), num("source", true)
	if err != nil {
		return nil, err
	}
	open, ok := kv["open"]
	if !ok {
		return nil, errors.New("open= is missing")
	}
	for _, flag := range strings.Split(open, ",") {
		switch flag {
		case "-":
		case "sync":
			j.openFlags |= unix.O_SYNC
		case "dsync":
			j.openFlags |= unix.O_DSYNC
		case "direct":
			j.openFlags |= unix.O_DIRECT
		default:
			return nil, fmt.Errorf("open flag %q", flag)
		}
	}
	return j, nil
}

func main() {
	mapSource()
	out := bufio.NewWriter(os.Stdout)
	version, _ := json.Marshal(runtime.Version())
	names, _ := json.Marshal(methods)
	reply(out, fmt.Appendf(nil, `{"runner":"go","protocol":1,"version":%s,"methods":%s}`, version, names))

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	var (
		cur   *job
		id    int64
		inRun bool
		paths []string
	)
	for in.Scan() {
		line := in.Text()
		word, rest, _ := strings.Cut(line, " ")
		switch {
		case line == "":
			continue
		case word == "case" || word == "latency":
			j, err := parseJob(word, strings.Fields(rest))
			if err != nil {
				protocolError(out, "%s line: %v", word, err)
			}
			cur, inRun = j, false
		case word == "part" && cur != nil && !cur.latency:
			f := strings.Fields(rest)
			var v [4]int64
			for i := range v {
				var err error
				if len(f) != 4 {
					protocolError(out, "part needs FILE OFFSET LEN SRC: %.200s", line)
				}
				if v[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
					protocolError(out, "part: %.200s", line)
				}
			}
			cur.parts = append(cur.parts, part{int(v[0]), v[1], v[2], v[3]})
		case word == "run" && cur != nil:
			n, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				protocolError(out, "run: %.200s", line)
			}
			id, inRun, paths, runCPUs = n, true, paths[:0], nil
		case word == "cpus" && inRun:
			runCPUs = runCPUs[:0]
			for _, w := range strings.Fields(rest) {
				c, err := strconv.Atoi(w)
				if err != nil || c < 0 || c >= 1024 {
					protocolError(out, "cpus: %.200s", line)
				}
				runCPUs = append(runCPUs, c)
			}
			if len(runCPUs) == 0 {
				protocolError(out, "cpus: %.200s", line)
			}
		case word == "file" && inRun:
			paths = append(paths, rest) // the path is the rest of the line, spaces and all
		case line == "go" && inRun:
			inRun = false
			if cur.latency {
				runLatency(cur, id, paths, out)
			} else {
				runCase(cur, id, paths, out)
			}
		case line == "quit":
			os.Exit(0)
		default:
			protocolError(out, "unexpected line: %.200s", line)
		}
	}
	if err := in.Err(); err != nil {
		protocolError(out, "reading stdin: %v", err)
	}
}

// ---- io_uring, with raw syscalls: the Go modules for it (giouring, iouring-go,
// go-uring) could not be fetched from the module proxy (403) when this was written,
// and x/sys/unix has the syscall numbers but not the ring's layout, which is the
// kernel's ABI below. ----

const (
	ioringOffSQRing      = 0
	ioringOffSQEs        = 0x10000000
	ioringEnterGetevents = 1
	ioringFeatSingleMmap = 1 << 0
	ioringFeatRWCurPos   = 1 << 3 // came in Linux 5.6 with IORING_OP_WRITE
	ioringOpWrite        = 23
	maxRequest           = 1 << 30 // one request's length (a u32); the rest follows as a short write's would
)

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

type uringSQE struct {
	opcode, flags    uint8
	ioprio           uint16
	fd               int32
	off, addr        uint64
	len, rwFlags     uint32
	userData         uint64
	bufIndex, person uint16
	spliceFdIn       int32
	addr3, pad       uint64
}

type uringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

// slot is one request in flight: exactly the bytes still owed and where they go.
type slot struct{ off, src, left int64 }

type ring struct {
	fd                     int
	mem, sqeMem            []byte
	sqTail, cqHead, cqTail *uint32
	sqMask, cqMask         uint32
	sqArray                []uint32
	sqes                   []uringSQE
	cqes                   []uringCQE
	toSubmit               uint32
	slots                  []slot
	free                   []int
}

// newRing sets up a ring for qd requests in flight (set-up, untimed by the parts).
func newRing(qd int) (*ring, *runError) {
	var p uringParams
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(qd), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		if errno == unix.ENOSYS || errno == unix.EPERM {
			return nil, fail("io_uring_setup (io_uring is missing or disabled here)", errno)
		}
		return nil, fail("io_uring_setup", errno)
	}
	g := &ring{fd: int(fd)}
	if p.features&ioringFeatSingleMmap == 0 || p.features&ioringFeatRWCurPos == 0 {
		g.close()
		return nil, failf(int(unix.EOPNOTSUPP), "io_uring: this kernel lacks IORING_OP_WRITE (Linux 5.6)")
	}
	size := max(p.sqOff.array+p.sqEntries*4, p.cqOff.cqes+p.cqEntries*uint32(unsafe.Sizeof(uringCQE{})))
	var err error
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE
	if g.mem, err = unix.Mmap(g.fd, ioringOffSQRing, int(size), prot, flags); err != nil {
		g.close()
		return nil, fail("mmap of the io_uring rings", err)
	}
	if g.sqeMem, err = unix.Mmap(g.fd, ioringOffSQEs, int(p.sqEntries)*int(unsafe.Sizeof(uringSQE{})), prot, flags); err != nil {
		g.close()
		return nil, fail("mmap of the io_uring SQEs", err)
	}
	at := func(off uint32) unsafe.Pointer { return unsafe.Pointer(&g.mem[off]) }
	g.sqTail, g.sqMask = (*uint32)(at(p.sqOff.tail)), *(*uint32)(at(p.sqOff.ringMask))
	g.cqHead, g.cqTail, g.cqMask = (*uint32)(at(p.cqOff.head)), (*uint32)(at(p.cqOff.tail)), *(*uint32)(at(p.cqOff.ringMask))
	g.sqArray = unsafe.Slice((*uint32)(at(p.sqOff.array)), p.sqEntries)
	g.cqes = unsafe.Slice((*uringCQE)(at(p.cqOff.cqes)), p.cqEntries)
	g.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&g.sqeMem[0])), p.sqEntries)
	g.slots = make([]slot, qd)
	g.free = make([]int, 0, qd)
	return g, nil
}

func (g *ring) close() {
	if g.sqeMem != nil {
		unix.Munmap(g.sqeMem)
	}
	if g.mem != nil {
		unix.Munmap(g.mem)
	}
	unix.Close(g.fd)
}

// push queues a write of (at most maxRequest of) what slot s still owes.
func (g *ring) push(s int, fd int) {
	tail := atomic.LoadUint32(g.sqTail)
	i := tail & g.sqMask
	sl := &g.slots[s]
	g.sqes[i] = uringSQE{opcode: ioringOpWrite, fd: int32(fd), off: uint64(sl.off),
		addr: uint64(uintptr(unsafe.Pointer(&source[sl.src]))), len: uint32(min(sl.left, maxRequest)), userData: uint64(s)}
	g.sqArray[i] = i
	// The kernel reads the entry only after it sees the new tail (atomics order this).
	atomic.StoreUint32(g.sqTail, tail+1)
	g.toSubmit++
}

// drive writes part p in requests of chunk bytes, keeping every free slot busy; a
// short completion resubmits the rest. After a failure it issues nothing new but
// reaps what is in flight, so no request outlives the part; the first error wins.
func (g *ring) drive(p part, fd int, chunk int64) *runError {
	g.free = g.free[:0]
	for s := len(g.slots) - 1; s >= 0; s-- {
		g.free = append(g.free, s)
	}
	var first *runError
	next, inFlight := int64(0), 0
	for {
		for first == nil && next < p.length && len(g.free) > 0 {
			s := g.free[len(g.free)-1]
			g.free = g.free[:len(g.free)-1]
			n := min(chunk, p.length-next)
			g.slots[s] = slot{off: p.offset + next, src: p.src + next, left: n}
			next += n
			g.push(s, fd)
			inFlight++
		}
		if inFlight == 0 {
			return first
		}
		n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(g.fd), uintptr(g.toSubmit), 1, ioringEnterGetevents, 0, 0)
		if errno == unix.EINTR { // nothing was submitted; wait again
			continue
		}
		if errno != 0 {
			// The ring itself failed; closing it cancels what is left.
			return firstOf(first, fail("io_uring_enter", errno))
		}
		g.toSubmit -= uint32(n)
		head, tail := atomic.LoadUint32(g.cqHead), atomic.LoadUint32(g.cqTail)
		for ; head != tail; head++ {
			c := g.cqes[head&g.cqMask]
			s := int(c.userData)
			sl := &g.slots[s]
			switch {
			case c.res == -int32(unix.EINTR) && first == nil:
				g.push(s, fd)
				continue
			case c.res < 0:
				first = firstOf(first, fail("io_uring write", syscall.Errno(-c.res)))
			case c.res == 0:
				first = firstOf(first, failf(0, "io_uring write: wrote 0 bytes of %d at offset %d", sl.left, sl.off))
			default:
				sl.off, sl.src, sl.left = sl.off+int64(c.res), sl.src+int64(c.res), sl.left-int64(c.res)
				if sl.left > 0 && first == nil {
					g.push(s, fd) // a short write: the rest, from where it stopped
					continue
				}
			}
			g.free = append(g.free, s)
			inFlight--
		}
		// The kernel may reuse the entries once it sees the new head.
		atomic.StoreUint32(g.cqHead, head)
	}
}

// firstOf keeps the first error.
func firstOf(first, e *runError) *runError {
	if first != nil {
		return first
	}
	return e
}
