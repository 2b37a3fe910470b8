/* The reference loop bench/overhead compares writebench against: the plainest C
 * that does what a writebench `write`/`pwrite` case does, with the same hygiene.
 *
 *   writeloop write|pwrite CHUNK SIZE DIR RUNS [PERIOD]
 *
 * Each run: create a file in DIR, fallocate it to SIZE, fsync (all untimed), then
 * time the loop of CHUNK-byte calls with CLOCK_MONOTONIC, then fsync and unlink
 * (untimed). The first run is a warm-up. Prints, for each measured run, one line: its
 * seconds and the CPU seconds the loop took (the thread's CPU clock, exact where getrusage moves in ticks). The source is an 8 MiB pseudo-random buffer (+ CHUNK so no call wraps), as
 * a single writebench writer has, or PERIOD bytes (bench/source-period compares the
 * two); short writes continue and EINTR retries, as in writebench. writebench also
 * re-stamps the first 8 bytes of each 4 KiB block of its buffer once per lap of the
 * period (so that no two blocks of a run are equal); this loop does not, on purpose:
 * bench/overhead's ratios are meant to show what writebench's loops cost, stamping
 * included. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_PERIOD ((size_t)8 << 20)

static void die(const char *what) {
    perror(what);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: %s write|pwrite CHUNK SIZE DIR RUNS [PERIOD]\n", argv[0]);
        return 2;
    }
    size_t period = argc == 7 ? strtoull(argv[6], NULL, 10) : DEFAULT_PERIOD;
    if (period == 0) {
        fprintf(stderr, "PERIOD must be at least 1\n");
        return 2;
    }
    int use_pwrite = strcmp(argv[1], "pwrite") == 0;
    size_t chunk = strtoull(argv[2], NULL, 10);
    uint64_t size = strtoull(argv[3], NULL, 10);
    int runs = atoi(argv[5]);
    char path[4096];
    snprintf(path, sizeof path, "%s/writeloop-%d.dat", argv[4], (int)getpid());

    size_t buffer_len = period + chunk;
    unsigned char *buffer = mmap(NULL, buffer_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buffer == MAP_FAILED) die("mmap");
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < buffer_len; i++) {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17;
        buffer[i] = i < period ? (unsigned char)state : buffer[i - period];
    }

    for (int run = 0; run <= runs; run++) {
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0) die("open");
        if (fallocate(fd, 0, 0, (off_t)size) != 0) die("fallocate");
        if (fsync(fd) != 0) die("fsync");

        struct timespec start, end;
        struct timespec cpu_start, cpu_end;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
        clock_gettime(CLOCK_MONOTONIC, &start);
        uint64_t offset = 0;
        size_t position = 0;
        while (offset < size) {
            size_t want = size - offset < chunk ? (size_t)(size - offset) : chunk;
            const unsigned char *p = buffer + position;
            size_t left = want;
            while (left > 0) {
                ssize_t n = use_pwrite ? pwrite(fd, p, left, (off_t)offset) : write(fd, p, left);
                if (n < 0) {
                    if (errno == EINTR) continue;
                    die("write");
                }
                p += n;
                left -= (size_t)n;
                offset += (uint64_t)n;
            }
            position += want;
            while (position >= period) position -= period;
        }
        clock_gettime(CLOCK_MONOTONIC, &end);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);

        if (fsync(fd) != 0) die("fsync");
        close(fd);
        unlink(path);
        double cpu = (double)(cpu_end.tv_sec - cpu_start.tv_sec) + (double)(cpu_end.tv_nsec - cpu_start.tv_nsec) * 1e-9;
        if (run > 0)
            printf("%.9f %.6f\n", (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9,
                   cpu);
    }
    return 0;
}
