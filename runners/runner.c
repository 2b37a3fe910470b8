/*
 * writebench's C runner (`--runtimes c`): writes the parts writebench hands it from the
 * source memfd on fd 3 and times them; writebench prepares the files, verifies them and
 * does the statistics. The line protocol is docs/runtimes.md.
 *
 * Methods: write, pwrite, writev, pwritev (iov iovecs of chunk bytes per call), fwrite
 * (stdio over fdopen(dup(fd)), fclose inside the part), mmap (MAP_SHARED map of each
 * file, memcpy of chunks, msync(MS_SYNC) to sync, munmap to close). Latency: pwrite
 * (pattern overwrite0) and write (pattern append).
 *
 * Build: cc -O2 -pthread -o runner runner.c   (C11, POSIX and Linux headers only)
 * Run:   ./runner   with the source memfd as fd 3, the protocol on stdin and stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SOURCE_FD 3

enum method { M_WRITE, M_PWRITE, M_WRITEV, M_PWRITEV, M_FWRITE, M_MMAP, M_COUNT };
static const char *const method_names[M_COUNT] = {"write", "pwrite", "writev", "pwritev", "fwrite", "mmap"};

enum sync_call { SYNC_NONE, SYNC_FSYNC, SYNC_FDATASYNC };

/* ---- errors: the first one of a run is what the reply reports ---- */

struct error {
    int err; /* errno, or 0 when the failure has none */
    char msg[256]; /* empty: no error */
};

/* Records "what: strerror(err)" (or "what" alone when err is 0) unless an error is
 * already there; returns false so callers can `return fail(...)`. */
static bool fail(struct error *e, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(struct error *e, int err, const char *fmt, ...) {
    if (e->msg[0])
        return false;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    if (err && n >= 0 && (size_t)n < sizeof e->msg)
        snprintf(e->msg + n, sizeof e->msg - n, ": %s", strerror(err));
    e->err = err;
    return false;
}

/* ---- clocks ---- */

static struct timespec origin; /* one origin per process, as the protocol asks */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - origin.tv_sec) + (double)(t.tv_nsec - origin.tv_nsec) * 1e-9;
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

struct cpu {
    double user, sys, total;
};

/* The thread's CPU clock is exact; getrusage moves in ticks and lags for a running
 * thread, so only its split is used: cpu_since divides the clock's total as getrusage
 * divides its own deltas (all system time where they did not move), as writebench does
 * for native. `total` is 0 in a delta. */
static struct cpu thread_cpu(void) {
    struct rusage u;
    struct timespec t;
    getrusage(RUSAGE_THREAD, &u);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (struct cpu){u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6, u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6,
                        t.tv_sec + t.tv_nsec * 1e-9};
}

static struct cpu cpu_since(struct cpu after, struct cpu before) {
    double total = after.total > before.total ? after.total - before.total : 0;
    double user = after.user > before.user ? after.user - before.user : 0;
    double sys = after.sys > before.sys ? after.sys - before.sys : 0;
    double share = user + sys > 0 ? user / (user + sys) : 0;
    double user_part = total * share; /* the share first: never above total */
    return (struct cpu){user_part, total > user_part ? total - user_part : 0, 0};
}

/* ---- the case, as the `case`/`latency` and `part` lines describe it ---- */

struct part {
    size_t file;
    off_t offset;
    size_t len;
    size_t src;
};

struct job {
    bool defined, latency;
    int method; /* -1: a method this runner does not have */
    char method_name[64];
    unsigned threads, iov, files;
    size_t chunk, source;
    int open_flags;
    enum sync_call end, everycall;
    unsigned long every;
    bool overwrite0; /* latency pattern; else append */
    size_t bytes;
    unsigned long count, warmup;
    struct part *parts;
    size_t nparts;
    struct error source_error; /* mapping the source failed: every run reports it */
};

static const unsigned char *src; /* the source, mapped read-only and shared */
static size_t src_len;

/* ---- where the writers start: the run's `cpus` line (docs/runtimes.md) ---- */

static long run_cpus[CPU_SETSIZE];
static size_t run_ncpus; /* 0: no `cpus` line, the scheduler places the writers */

struct placed {
    bool moved;
    cpu_set_t before;
};

/* Moves the calling thread, writer `index`, to its CPU before the start line. A
 * courtesy, as in writebench: where the kernel refuses, the run goes on unplaced. */
static struct placed place(size_t index) {
    struct placed p = {false};
    if (index >= run_ncpus || sched_getaffinity(0, sizeof p.before, &p.before) != 0)
        return p;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET((int)run_cpus[index], &one);
    p.moved = sched_setaffinity(0, sizeof one, &one) == 0;
    return p;
}

/* After the start line: free to run anywhere again (it stays until the scheduler moves it). */
static void release(const struct placed *p) {
    if (p->moved)
        sched_setaffinity(0, sizeof p->before, &p->before);
}

/* ---- every:N, counted across the case's threads (docs/runtimes.md) ---- */

struct pacing {
    unsigned long every;
    enum sync_call call;
    atomic_ulong calls;
    atomic_uint ended;
    unsigned writers;
    bool shared; /* one file for all parts */
};

struct pacer {
    struct pacing *p;
    unsigned long since; /* this writer's calls since it last synced */
};

/* Counts one call; true when the caller must sync now. */
static inline bool due(struct pacer *pc) {
    unsigned long every = pc->p->every;
    if (!every)
        return false;
    pc->since++;
    /* acq_rel: the thread that sees the count its call made also sees every call
     * counted before it, so its sync covers them. */
    unsigned long n = atomic_fetch_add_explicit(&pc->p->calls, 1, memory_order_acq_rel) + 1;
    if (n % every == 0) {
        pc->since = 0;
        return true;
    }
    return false;
}

/* Asked once as a part ends: true when this writer must sync the calls not yet synced. */
static bool at_end(struct pacer *pc) {
    unsigned long every = pc->p->every;
    if (!every)
        return false;
    if (!pc->p->shared)
        return pc->since > 0;
    bool last = atomic_fetch_add_explicit(&pc->p->ended, 1, memory_order_acq_rel) + 1 == pc->p->writers;
    return last && atomic_load_explicit(&pc->p->calls, memory_order_acquire) % every != 0;
}

static const char *sync_name(enum sync_call c) {
    return c == SYNC_FDATASYNC ? "fdatasync" : "fsync";
}

static bool sync_fd(int fd, enum sync_call c, struct error *e) {
    int rc;
    do
        rc = c == SYNC_FDATASYNC ? fdatasync(fd) : fsync(fd);
    while (rc != 0 && errno == EINTR);
    return rc == 0 || fail(e, errno, "%s", sync_name(c));
}

/* ---- one run ---- */

struct times {
    double start, end, synced;
    bool has_synced;
    struct cpu cpu;
};

struct run {
    const struct job *job;
    int *fds;
    unsigned char **maps; /* mmap: one map per file, shared by its parts */
    size_t *map_lens;
    FILE **streams; /* fwrite: one stream per part */
    struct pacing pacing;
    pthread_barrier_t barrier;
    bool own_sync; /* a file per part and an `end` mode: each writer syncs its own */
    struct times *times;
    struct error *errors;
};

/* msync of file `file`'s map, and fsync for the fsync modes (msync is a data sync). */
static bool sync_map(struct run *r, size_t file, enum sync_call c, struct error *e) {
    if (r->map_lens[file] && msync(r->maps[file], r->map_lens[file], MS_SYNC) != 0)
        return fail(e, errno, "msync");
    return c != SYNC_FSYNC || sync_fd(r->fds[file], SYNC_FSYNC, e);
}

static bool sync_file(struct run *r, size_t file, enum sync_call c, struct error *e) {
    return r->job->method == M_MMAP ? sync_map(r, file, c, e) : sync_fd(r->fds[file], c, e);
}

/* One chunk: pwrite at `off` or write at the file position, a short write continuing
 * with the rest of the chunk (the plain loops' and latency's one call). */
static inline bool write_chunk(int fd, bool positional, const unsigned char *buf, size_t len, off_t off,
                               struct error *e) {
    while (len > 0) {
        ssize_t n = positional ? pwrite(fd, buf, len, off) : write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return fail(e, errno, "%s", positional ? "pwrite" : "write");
        }
        if (n == 0)
            return fail(e, 0, "%s: wrote 0 bytes", positional ? "pwrite" : "write");
        buf += n;
        len -= (size_t)n;
        off += n;
    }
    return true;
}

/* write/pwrite: one chunk per call, a short write continues with the rest. */
static bool write_plain(struct run *r, const struct part *p, struct pacer *pc, struct error *e) {
    int fd = r->fds[p->file];
    bool positional = r->job->method == M_PWRITE;
    const unsigned char *buf = src + p->src, *end = buf + p->len;
    off_t off = p->offset;
    while (buf < end) {
        size_t want = (size_t)(end - buf) < r->job->chunk ? (size_t)(end - buf) : r->job->chunk;
        if (!write_chunk(fd, positional, buf, want, off, e))
            return false;
        buf += want;
        off += (off_t)want;
        if (due(pc) && !sync_fd(fd, pc->p->call, e))
            return false;
    }
    return !at_end(pc) || sync_fd(fd, pc->p->call, e);
}

/* writev/pwritev: `iov` iovecs of `chunk` bytes per call; after a short write the
 * exact bytes left are submitted again. `v` has room for `iov` iovecs. */
static bool write_vectored(struct run *r, const struct part *p, struct iovec *v, struct pacer *pc, struct error *e) {
    int fd = r->fds[p->file];
    bool positional = r->job->method == M_PWRITEV;
    size_t chunk = r->job->chunk, batch_max = chunk * r->job->iov;
    const unsigned char *buf = src + p->src, *end = buf + p->len;
    off_t off = p->offset;
    while (buf < end) {
        size_t batch = (size_t)(end - buf) < batch_max ? (size_t)(end - buf) : batch_max;
        int cnt = 0;
        for (size_t k = 0; k < batch; k += chunk) {
            v[cnt].iov_base = (void *)(buf + k);
            v[cnt].iov_len = batch - k < chunk ? batch - k : chunk;
            cnt++;
        }
        struct iovec *pending = v;
        while (cnt > 0) {
            ssize_t n = positional ? pwritev(fd, pending, cnt, off) : writev(fd, pending, cnt);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return fail(e, errno, "%s", positional ? "pwritev" : "writev");
            }
            if (n == 0)
                return fail(e, 0, "%s: wrote 0 bytes", positional ? "pwritev" : "writev");
            buf += n;
            off += n;
            size_t left = (size_t)n;
            while (cnt > 0 && left >= pending->iov_len) {
                left -= pending->iov_len;
                pending++;
                cnt--;
            }
            if (cnt > 0) {
                pending->iov_base = (char *)pending->iov_base + left;
                pending->iov_len -= left;
            }
        }
        if (due(pc) && !sync_fd(fd, pc->p->call, e))
            return false;
    }
    return !at_end(pc) || sync_fd(fd, pc->p->call, e);
}

/* A sync of a stdio stream: its buffer into the kernel first, then the sync call. */
static bool flush_and_sync(FILE *f, enum sync_call c, struct error *e) {
    if (fflush(f) != 0)
        return fail(e, errno, "fflush");
    return sync_fd(fileno(f), c, e);
}

/* fwrite: one fwrite per chunk into the part's stream; fclose (which flushes stdio's
 * buffer) belongs to the part, since the data is not in the kernel before it. */
static bool write_stdio(struct run *r, size_t index, struct pacer *pc, struct error *e) {
    const struct part *p = &r->job->parts[index];
    FILE *f = r->streams[index];
    r->streams[index] = NULL; /* closed below, whatever happens */
    const unsigned char *buf = src + p->src, *end = buf + p->len;
    bool ok = true;
    while (ok && buf < end) {
        size_t want = (size_t)(end - buf) < r->job->chunk ? (size_t)(end - buf) : r->job->chunk;
        size_t done = 0;
        while (done < want) {
            done += fwrite(buf + done, 1, want - done, f);
            if (done < want) {
                /* stdio reports EINTR as a short count with the error flag: go on. */
                if (errno != EINTR) {
                    ok = fail(e, errno, "fwrite");
                    break;
                }
                clearerr(f);
            }
        }
        buf += done;
        if (ok && due(pc))
            ok = flush_and_sync(f, pc->p->call, e);
    }
    if (ok && at_end(pc))
        ok = flush_and_sync(f, pc->p->call, e);
    if (fclose(f) != 0)
        ok = fail(e, errno, "fclose");
    return ok;
}

/* mmap: memcpy of chunks into the file's map; first touches fault the pages in. */
static bool write_mapped(struct run *r, const struct part *p, struct pacer *pc, struct error *e) {
    unsigned char *dst = r->maps[p->file] + p->offset;
    const unsigned char *from = src + p->src;
    size_t chunk = r->job->chunk;
    for (size_t done = 0; done < p->len;) {
        size_t piece = p->len - done < chunk ? p->len - done : chunk;
        memcpy(dst + done, from + done, piece);
        done += piece;
        if (due(pc) && !sync_map(r, p->file, pc->p->call, e))
            return false;
    }
    return !at_end(pc) || sync_map(r, p->file, pc->p->call, e);
}

/* One writer: its untimed preparation, the start line, the timed part, its own sync. */
static void write_part(struct run *r, size_t index, bool wait) {
    const struct job *job = r->job;
    const struct part *p = &job->parts[index];
    struct times *t = &r->times[index];
    struct error *e = &r->errors[index];
    struct iovec *v = NULL;
    bool ready = true;
    struct placed placed = place(index);
    if (job->method == M_WRITEV || job->method == M_PWRITEV) {
        v = malloc(job->iov * sizeof *v);
        ready = v || fail(e, ENOMEM, "malloc of iovecs");
    }
    /* write/writev write at the file position: place it once, before the clock. */
    if (ready && (job->method == M_WRITE || job->method == M_WRITEV) &&
        lseek(r->fds[p->file], p->offset, SEEK_SET) < 0)
        ready = fail(e, errno, "lseek");
    if (wait) {
        /* Everyone waits, even a writer that failed: the others would wait forever. */
        pthread_barrier_wait(&r->barrier);
    }
    release(&placed);
    struct cpu before = thread_cpu();
    struct pacer pc = {&r->pacing, 0};
    t->start = now();
    bool ok = ready;
    if (ok) {
        switch (job->method) {
        case M_WRITE:
        case M_PWRITE: ok = write_plain(r, p, &pc, e); break;
        case M_WRITEV:
        case M_PWRITEV: ok = write_vectored(r, p, v, &pc, e); break;
        case M_FWRITE: ok = write_stdio(r, index, &pc, e); break;
        case M_MMAP: ok = write_mapped(r, p, &pc, e); break;
        }
    }
    t->end = now();
    if (ok && r->own_sync) {
        sync_file(r, p->file, job->end, e);
        t->synced = now();
        t->has_synced = true;
    }
    struct cpu after = thread_cpu();
    t->cpu = cpu_since(after, before);
    free(v);
}

struct worker_arg {
    struct run *run;
    size_t index;
};

static void *worker(void *arg) {
    struct worker_arg *w = arg;
    write_part(w->run, w->index, true);
    return NULL;
}

/* ---- replies ---- */

static void print_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static void reply_error(long run, const struct error *e) {
    printf("{\"run\":%ld,\"error\":", run);
    print_json_string(e->msg);
    printf(",\"errno\":%d}\n", e->err);
    fflush(stdout);
}

static void protocol_error(const char *what, const char *line) {
    struct error e = {0};
    fail(&e, 0, "%s: %.200s", what, line);
    reply_error(-1, &e);
    exit(2);
}

/* ---- set-up that is nobody's timed work ---- */

/* The source pages are faulted into our map before the clock starts, so a part's
 * first touches of them are not in its span (a native writer's buffer is warm too). */
static bool populate_source(struct error *e) {
    if (!src_len)
        return true;
    if (madvise((void *)src, src_len, MADV_POPULATE_READ) == 0)
        return true;
    if (errno != EINVAL) /* EINVAL: before Linux 5.14; touch every page instead */
        return fail(e, errno, "madvise(MADV_POPULATE_READ) of the source");
    long page = sysconf(_SC_PAGESIZE);
    volatile unsigned char sink = 0;
    for (size_t i = 0; i < src_len; i += page)
        sink ^= src[i];
    (void)sink;
    return true;
}

/* What the parts need of each file: its length and which parts share it. */
static bool check_layout(const struct job *job, size_t nfiles, struct error *e) {
    if (nfiles != job->files)
        return fail(e, 0, "%zu file lines for files=%u", nfiles, job->files);
    if (job->nparts != job->threads)
        return fail(e, 0, "%zu part lines for threads=%u", job->nparts, job->threads);
    for (size_t i = 0; i < job->nparts; i++) {
        const struct part *p = &job->parts[i];
        if (p->file >= nfiles)
            return fail(e, 0, "part %zu: file %zu of %zu", i, p->file, nfiles);
        if (p->src > job->source || p->len > job->source - p->src)
            return fail(e, 0, "part %zu: source bytes %zu+%zu beyond the source's %zu", i, p->src, p->len,
                        job->source);
        /* write, writev and fwrite use the file position, which parts of one file share. */
        if (job->method == M_WRITE || job->method == M_WRITEV || job->method == M_FWRITE)
            for (size_t k = 0; k < i; k++)
                if (job->parts[k].file == p->file)
                    return fail(e, 0, "%s writes at the file position: each part needs a file of its own",
                                method_names[job->method]);
    }
    return true;
}

/* mmap: a map of each file's whole length. A map cannot extend its file, and a fault
 * into a full file system is SIGBUS, so both are refused here (as native does). */
static bool map_files(struct run *r, size_t nfiles, struct error *e) {
    const struct job *job = r->job;
    uint64_t needed = 0;
    for (size_t f = 0; f < nfiles; f++) {
        struct stat st;
        if (fstat(r->fds[f], &st) != 0)
            return fail(e, errno, "fstat");
        uint64_t want = 0;
        for (size_t i = 0; i < job->nparts; i++)
            if (job->parts[i].file == f && (uint64_t)job->parts[i].offset + job->parts[i].len > want)
                want = (uint64_t)job->parts[i].offset + job->parts[i].len;
        if ((uint64_t)st.st_size < want || (want && st.st_size == 0))
            return fail(e, 0, "mmap cannot extend a file");
        uint64_t allocated = (uint64_t)st.st_blocks * 512;
        if ((uint64_t)st.st_size > allocated)
            needed += (uint64_t)st.st_size - allocated;
        r->map_lens[f] = (size_t)st.st_size;
    }
    struct statvfs vfs;
    if (nfiles && fstatvfs(r->fds[0], &vfs) == 0 && needed > (uint64_t)vfs.f_bavail * vfs.f_frsize)
        return fail(e, ENOSPC, "mmap needs %" PRIu64 " bytes free, the file system has %" PRIu64, needed,
                    (uint64_t)vfs.f_bavail * vfs.f_frsize);
    for (size_t f = 0; f < nfiles; f++) {
        if (!r->map_lens[f])
            continue; /* nothing to write; mmap(2) refuses a length of 0 */
        void *m = mmap(NULL, r->map_lens[f], PROT_WRITE, MAP_SHARED, r->fds[f], 0);
        if (m == MAP_FAILED) {
            r->map_lens[f] = 0;
            return fail(e, errno, "mmap");
        }
        r->maps[f] = m;
    }
    return true;
}

/* fwrite: a stream per part over a duplicate of its descriptor (fclose closes the
 * duplicate; the run's descriptor stays for the sync), positioned at the part. */
static bool open_streams(struct run *r, struct error *e) {
    for (size_t i = 0; i < r->job->nparts; i++) {
        const struct part *p = &r->job->parts[i];
        int dup_fd = dup(r->fds[p->file]);
        if (dup_fd < 0)
            return fail(e, errno, "dup");
        if (lseek(dup_fd, p->offset, SEEK_SET) < 0) {
            fail(e, errno, "lseek");
            close(dup_fd);
            return false;
        }
        r->streams[i] = fdopen(dup_fd, "w");
        if (!r->streams[i]) {
            fail(e, errno, "fdopen");
            close(dup_fd);
            return false;
        }
    }
    return true;
}

static void print_time_or_null(bool has, double t) {
    if (has)
        printf("%.9f", t);
    else
        fputs("null", stdout);
}

static void run_case(const struct job *job, long run_id, char **paths, size_t nfiles) {
    struct error e = {0};
    if (job->source_error.msg[0]) {
        reply_error(run_id, &job->source_error);
        return;
    }
    if (job->method < 0) {
        fail(&e, 0, "the c runner has no method %s", job->method_name);
        reply_error(run_id, &e);
        return;
    }
    if (!check_layout(job, nfiles, &e) || !populate_source(&e)) {
        reply_error(run_id, &e);
        return;
    }
    struct run r = {.job = job};
    r.fds = malloc(nfiles * sizeof *r.fds);
    r.maps = calloc(nfiles, sizeof *r.maps);
    r.map_lens = calloc(nfiles, sizeof *r.map_lens);
    r.streams = calloc(job->nparts, sizeof *r.streams);
    r.times = calloc(job->nparts, sizeof *r.times);
    r.errors = calloc(job->nparts, sizeof *r.errors);
    pthread_t *threads = calloc(job->nparts, sizeof *threads);
    struct worker_arg *args = calloc(job->nparts, sizeof *args);
    if (!r.fds || !r.maps || !r.map_lens || !r.streams || !r.times || !r.errors || !threads || !args) {
        fprintf(stderr, "runner: out of memory\n");
        exit(1);
    }
    size_t opened = 0;
    /* mmap(MAP_SHARED, PROT_WRITE) needs a descriptor open for reading too. */
    int access = job->method == M_MMAP ? O_RDWR : O_WRONLY;
    bool ok = true;
    for (; opened < nfiles; opened++) {
        r.fds[opened] = open(paths[opened], access | job->open_flags | O_CLOEXEC);
        if (r.fds[opened] < 0) {
            ok = fail(&e, errno, "open");
            break;
        }
    }
    double setup_start = now();
    if (ok && job->method == M_MMAP)
        ok = map_files(&r, nfiles, &e);
    if (ok && job->method == M_FWRITE)
        ok = open_streams(&r, &e);
    double setup = now() - setup_start;

    double sync_start = 0, sync_end = 0, close_start = 0, close_end = 0;
    struct cpu main_cpu = {0, 0, 0};
    bool synced = false;
    if (ok) {
        r.pacing.every = job->every;
        r.pacing.call = job->everycall;
        r.pacing.writers = job->threads;
        r.pacing.shared = nfiles == 1;
        r.own_sync = job->end != SYNC_NONE && nfiles > 1;
        if (job->threads == 1) {
            write_part(&r, 0, false);
        } else {
            pthread_barrier_init(&r.barrier, NULL, job->threads);
            for (size_t i = 0; i < job->nparts; i++) {
                args[i] = (struct worker_arg){&r, i};
                int rc = pthread_create(&threads[i], NULL, worker, &args[i]);
                if (rc != 0) {
                    /* The threads already started wait at the barrier for ever. */
                    fail(&e, rc, "pthread_create");
                    reply_error(run_id, &e);
                    exit(1);
                }
            }
            for (size_t i = 0; i < job->nparts; i++)
                pthread_join(threads[i], NULL);
            pthread_barrier_destroy(&r.barrier);
        }
        for (size_t i = 0; i < job->nparts && ok; i++)
            if (r.errors[i].msg[0]) {
                e = r.errors[i];
                ok = false;
            }
        struct cpu before = thread_cpu();
        if (ok && job->end != SYNC_NONE && !r.own_sync) {
            sync_start = now();
            for (size_t f = 0; f < nfiles && ok; f++)
                ok = sync_file(&r, f, job->end, &e);
            sync_end = now();
            synced = true;
        }
        close_start = now();
        for (size_t f = 0; f < nfiles; f++) {
            if (r.map_lens[f] && munmap(r.maps[f], r.map_lens[f]) != 0)
                ok = fail(&e, errno, "munmap");
            r.map_lens[f] = 0;
        }
        for (size_t f = 0; f < opened; f++)
            if (close(r.fds[f]) != 0)
                ok = fail(&e, errno, "close");
        opened = 0;
        close_end = now();
        struct cpu after = thread_cpu();
        main_cpu = cpu_since(after, before);
    }
    /* After a failure in the set-up: untimed cleanup. */
    for (size_t i = 0; i < job->nparts; i++)
        if (r.streams[i])
            fclose(r.streams[i]);
    for (size_t f = 0; f < nfiles; f++)
        if (r.map_lens[f])
            munmap(r.maps[f], r.map_lens[f]);
    for (size_t f = 0; f < opened; f++)
        close(r.fds[f]);

    if (!ok) {
        reply_error(run_id, &e);
    } else {
        printf("{\"run\":%ld,\"setup\":%.9f,\"parts\":[", run_id, setup);
        for (size_t i = 0; i < job->nparts; i++) {
            const struct times *t = &r.times[i];
            printf("%s{\"start\":%.9f,\"end\":%.9f,\"synced\":", i ? "," : "", t->start, t->end);
            print_time_or_null(t->has_synced, t->synced);
            printf(",\"user\":%.6f,\"sys\":%.6f}", t->cpu.user, t->cpu.sys);
        }
        fputs("],\"sync\":", stdout);
        if (synced)
            printf("[%.9f,%.9f]", sync_start, sync_end);
        else
            fputs("null", stdout);
        printf(",\"close\":[%.9f,%.9f],\"user\":%.6f,\"sys\":%.6f}\n", close_start, close_end, main_cpu.user,
               main_cpu.sys);
        fflush(stdout);
    }
    free(r.fds);
    free(r.maps);
    free(r.map_lens);
    free(r.streams);
    free(r.times);
    free(r.errors);
    free(threads);
    free(args);
}

/* ---- latency: each operation timed alone ---- */


static void run_latency(const struct job *job, long run_id, char **paths, size_t nfiles) {
    struct error e = {0};
    if (job->source_error.msg[0]) {
        reply_error(run_id, &job->source_error);
        return;
    }
    bool overwrite0 = job->method == M_PWRITE;
    if (!((job->method == M_PWRITE && job->overwrite0) || (job->method == M_WRITE && !job->overwrite0))) {
        fail(&e, 0, "the c runner's latency methods are pwrite (overwrite0) and write (append), not %s (%s)",
             job->method_name, job->overwrite0 ? "overwrite0" : "append");
        reply_error(run_id, &e);
        return;
    }
    if (nfiles != 1 || job->bytes > job->source) {
        fail(&e, 0, "latency needs one file and bytes <= source (%zu files, bytes=%zu, source=%zu)", nfiles,
             job->bytes, job->source);
        reply_error(run_id, &e);
        return;
    }
    if (!populate_source(&e)) {
        reply_error(run_id, &e);
        return;
    }
    int64_t *ops = malloc((job->count ? job->count : 1) * sizeof *ops);
    int64_t *syncs = malloc((job->count ? job->count : 1) * sizeof *syncs);
    if (!ops || !syncs) {
        fprintf(stderr, "runner: out of memory\n");
        exit(1);
    }
    size_t nsyncs = 0;
    struct placed placed = place(0);
    release(&placed);
    int fd = open(paths[0], O_WRONLY | job->open_flags | O_CLOEXEC);
    bool ok = fd >= 0 || fail(&e, errno, "open");
    struct pacing pacing = {.every = job->every, .call = job->everycall, .writers = 1, .shared = true};
    struct pacer pc = {&pacing, 0};
    struct cpu before = {0, 0, 0};
    double loop_start = 0, loop_end = 0, sync_start = 0, sync_end = 0;
    unsigned long total = job->warmup + job->count;
    for (unsigned long number = 0; ok && number < total; number++) {
        if (number == job->warmup) {
            before = thread_cpu();
            loop_start = now();
        }
        int64_t t0 = now_ns();
        ok = write_chunk(fd, overwrite0, src, job->bytes, 0, &e);
        int64_t t1 = now_ns(), t2 = t1;
        if (ok && due(&pc)) {
            ok = sync_fd(fd, job->everycall, &e);
            t2 = now_ns();
            if (number >= job->warmup)
                syncs[nsyncs++] = t2 - t1;
        }
        if (number >= job->warmup)
            ops[number - job->warmup] = t2 - t0;
    }
    if (ok && job->count == 0) {
        before = thread_cpu();
        loop_start = now();
    }
    loop_end = now();
    if (ok && job->end != SYNC_NONE) {
        sync_start = now();
        ok = sync_fd(fd, job->end, &e);
        sync_end = now();
    }
    struct cpu after = thread_cpu();
    if (fd >= 0 && close(fd) != 0)
        ok = fail(&e, errno, "close");
    if (!ok) {
        reply_error(run_id, &e);
    } else {
        printf("{\"run\":%ld,\"loop\":[%.9f,%.9f],\"ops\":[", run_id, loop_start, loop_end);
        for (unsigned long i = 0; i < job->count; i++)
            printf(i ? ",%" PRId64 : "%" PRId64, ops[i]);
        fputs("],\"syncs\":[", stdout);
        for (size_t i = 0; i < nsyncs; i++)
            printf(i ? ",%" PRId64 : "%" PRId64, syncs[i]);
        fputs("],\"sync\":", stdout);
        if (job->end != SYNC_NONE)
            printf("[%.9f,%.9f]", sync_start, sync_end);
        else
            fputs("null", stdout);
        struct cpu used = cpu_since(after, before);
        printf(",\"user\":%.6f,\"sys\":%.6f}\n", used.user, used.sys);
        fflush(stdout);
    }
    free(ops);
    free(syncs);
}

/* ---- parsing ---- */

static bool parse_u64(const char *s, unsigned long long *out) {
    if (!*s || *s == '-' || *s == '+')
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

static bool parse_sync(const char *s, enum sync_call *out, bool none_ok) {
    if (!strcmp(s, "fsync"))
        *out = SYNC_FSYNC;
    else if (!strcmp(s, "fdatasync"))
        *out = SYNC_FDATASYNC;
    else if (none_ok && !strcmp(s, "none"))
        *out = SYNC_NONE;
    else
        return false;
    return true;
}

static bool parse_open_flags(const char *s, int *out) {
    *out = 0;
    if (!strcmp(s, "-"))
        return true;
    char copy[128];
    if (strlen(s) >= sizeof copy)
        return false;
    strcpy(copy, s);
    for (char *save, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "sync"))
            *out |= O_SYNC;
        else if (!strcmp(tok, "dsync"))
            *out |= O_DSYNC;
        else if (!strcmp(tok, "direct"))
            *out |= O_DIRECT;
        else
            return false;
    }
    return true;
}

static void map_source(struct job *job) {
    if (src_len)
        munmap((void *)src, src_len);
    src = NULL;
    src_len = 0;
    if (!job->source)
        return;
    void *m = mmap(NULL, job->source, PROT_READ, MAP_SHARED, SOURCE_FD, 0);
    if (m == MAP_FAILED) {
        fail(&job->source_error, errno, "mmap of the source (fd 3)");
        return;
    }
    src = m;
    src_len = job->source;
}

/* `case ...` or `latency ...`: key=value words; unknown keys are ignored. */
static void parse_header(struct job *job, char *line, bool latency) {
    char *original = strdup(line);
    free(job->parts);
    *job = (struct job){.defined = true, .latency = latency, .method = -1, .threads = 1, .iov = 1, .files = 1,
                        .chunk = 1, .everycall = SYNC_FSYNC};
    bool have_method = false, have_source = false;
    char *save;
    strtok_r(line, " ", &save); /* the command word */
    for (char *tok = strtok_r(NULL, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            protocol_error("expected key=value", original);
        *eq = '\0';
        const char *key = tok, *val = eq + 1;
        unsigned long long n = 0;
        bool numeric = !strcmp(key, "threads") || !strcmp(key, "chunk") || !strcmp(key, "iov") ||
                       !strcmp(key, "qd") || !strcmp(key, "files") || !strcmp(key, "every") ||
                       !strcmp(key, "source") || !strcmp(key, "bytes") || !strcmp(key, "count") ||
                       !strcmp(key, "warmup");
        if (numeric && !parse_u64(val, &n))
            protocol_error("bad number", original);
        if (!strcmp(key, "method")) {
            snprintf(job->method_name, sizeof job->method_name, "%s", val);
            for (int m = 0; m < M_COUNT; m++)
                if (!strcmp(val, method_names[m]))
                    job->method = m;
            have_method = true;
        } else if (!strcmp(key, "threads")) {
            if (n < 1 || n > 4096)
                protocol_error("threads out of range", original);
            job->threads = (unsigned)n;
        } else if (!strcmp(key, "chunk")) {
            if (n < 1 || n > SIZE_MAX / 2)
                protocol_error("chunk out of range", original);
            job->chunk = (size_t)n;
        } else if (!strcmp(key, "iov")) {
            if (n < 1 || n > INT_MAX)
                protocol_error("iov out of range", original);
            job->iov = (unsigned)n;
        } else if (!strcmp(key, "files")) {
            if (n < 1 || n > 4096)
                protocol_error("files out of range", original);
            job->files = (unsigned)n;
        } else if (!strcmp(key, "open")) {
            if (!parse_open_flags(val, &job->open_flags))
                protocol_error("bad open flags", original);
        } else if (!strcmp(key, "end")) {
            if (!parse_sync(val, &job->end, true))
                protocol_error("bad end", original);
        } else if (!strcmp(key, "everycall")) {
            if (!parse_sync(val, &job->everycall, false))
                protocol_error("bad everycall", original);
        } else if (!strcmp(key, "every")) {
            job->every = (unsigned long)n;
        } else if (!strcmp(key, "source")) {
            job->source = (size_t)n;
            have_source = true;
        } else if (!strcmp(key, "pattern")) {
            if (!strcmp(val, "overwrite0"))
                job->overwrite0 = true;
            else if (strcmp(val, "append"))
                protocol_error("bad pattern", original);
        } else if (!strcmp(key, "bytes")) {
            job->bytes = (size_t)n;
        } else if (!strcmp(key, "count")) {
            job->count = (unsigned long)n;
        } else if (!strcmp(key, "warmup")) {
            job->warmup = (unsigned long)n;
        }
    }
    if (!have_method || !have_source)
        protocol_error("method= and source= are required", original);
    if (job->chunk > SIZE_MAX / job->iov)
        protocol_error("chunk x iov too large", original);
    free(original);
    map_source(job);
}

int main(void) {
    clock_gettime(CLOCK_MONOTONIC, &origin);
    printf("{\"runner\":\"c\",\"protocol\":1,\"version\":");
    print_json_string(__VERSION__);
    fputs(",\"methods\":[", stdout);
    for (int m = 0; m < M_COUNT; m++)
        printf("%s\"%s\"", m ? "," : "", method_names[m]);
    puts("]}");
    fflush(stdout);

    struct job job = {0};
    char **paths = NULL;
    size_t npaths = 0, cap = 0;
    long run_id = -1;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    while ((len = getline(&line, &line_cap, stdin)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        if (len == 0)
            continue;
        if (!strncmp(line, "case ", 5) || !strncmp(line, "latency ", 8)) {
            parse_header(&job, line, line[0] == 'l');
        } else if (!strncmp(line, "part ", 5)) {
            unsigned long long f, off, ln, s;
            char extra;
            if (!job.defined || job.latency ||
                sscanf(line + 5, "%llu %llu %llu %llu %c", &f, &off, &ln, &s, &extra) != 4 ||
                off > (unsigned long long)INT64_MAX - ln)
                protocol_error("bad part line", line);
            struct part *parts = realloc(job.parts, (job.nparts + 1) * sizeof *parts);
            if (!parts)
                protocol_error("out of memory", line);
            job.parts = parts;
            job.parts[job.nparts++] = (struct part){(size_t)f, (off_t)off, (size_t)ln, (size_t)s};
        } else if (!strncmp(line, "run ", 4)) {
            char *end;
            errno = 0;
            run_id = strtol(line + 4, &end, 10);
            if (!job.defined || errno || *end || end == line + 4)
                protocol_error("bad run line", line);
            for (size_t i = 0; i < npaths; i++)
                free(paths[i]);
            npaths = 0;
            run_ncpus = 0;
        } else if (!strncmp(line, "cpus ", 5)) {
            if (run_id < 0)
                protocol_error("cpus before run", line);
            run_ncpus = 0;
            for (char *at = line + 5, *end;; at = end) {
                errno = 0;
                long cpu = strtol(at, &end, 10);
                if (end == at)
                    break;
                if (errno || cpu < 0 || cpu >= CPU_SETSIZE || run_ncpus == CPU_SETSIZE)
                    protocol_error("bad cpus line", line);
                run_cpus[run_ncpus++] = cpu;
            }
            if (run_ncpus == 0 || strspn(line + 5, " 0123456789") != strlen(line + 5))
                protocol_error("bad cpus line", line);
        } else if (!strncmp(line, "file ", 5)) {
            if (run_id < 0)
                protocol_error("file before run", line);
            if (npaths == cap) {
                cap = cap ? 2 * cap : 8;
                paths = realloc(paths, cap * sizeof *paths);
                if (!paths)
                    protocol_error("out of memory", line);
            }
            paths[npaths++] = strdup(line + 5);
        } else if (!strcmp(line, "go")) {
            if (run_id < 0)
                protocol_error("go before run", line);
            if (job.latency)
                run_latency(&job, run_id, paths, npaths);
            else
                run_case(&job, run_id, paths, npaths);
        } else if (!strcmp(line, "quit")) {
            break;
        } else {
            protocol_error("unknown command", line);
        }
    }
    for (size_t i = 0; i < npaths; i++)
        free(paths[i]);
    free(paths);
    free(job.parts);
    free(line);
    return 0;
}
