/* A writer of one large new file: fwrite in 4 KiB pieces (stdio passes each to one
 * write call), one fsync at the end, as many tools write their output.
 *
 *     cc -O2 -o bigwrite bigwrite.c && ./bigwrite [FILE] [MIB]   (default: big.bin 64)
 *
 * It prints its own counts (write calls, bytes, syncs) and its rate over the loop that
 * writes and syncs, so that `writebench trace -- ./bigwrite` can be checked against
 * what the program itself did (docs/trace.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PIECE 4096

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "big.bin";
    long mib = argc > 2 ? atol(argv[2]) : 64;
    long pieces = mib * (1024 * 1024 / PIECE);
    static char piece[PIECE];
    memset(piece, 'w', sizeof piece);
    FILE *file = fopen(path, "w");
    if (!file) {
        perror(path);
        return 1;
    }
    /* A buffer of one piece: each fwrite of a whole piece is one write call. */
    setvbuf(file, NULL, _IOFBF, PIECE);
    double start = now();
    long writes = 0;
    for (long i = 0; i < pieces; i++) {
        if (fwrite(piece, 1, PIECE, file) != PIECE) {
            perror("fwrite");
            return 1;
        }
        writes++;
    }
    if (fflush(file) != 0 || fsync(fileno(file)) != 0) {
        perror("fsync");
        return 1;
    }
    double seconds = now() - start;
    fclose(file);
    long bytes = pieces * PIECE;
    printf("bigwrite: %ld MiB in %ld fwrite calls of 4 KiB to %s, one fsync at the end: %.0f MB/s (%.3f s)\n",
           mib, writes, path, bytes / seconds / 1e6, seconds);
    printf("counts: writes=%ld bytes=%ld syncs=1 seconds=%.6f\n", writes, bytes, seconds);
    return 0;
}
