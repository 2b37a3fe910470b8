/*
 * writebench's Java runner (`--runtimes java`): writes the parts writebench hands it from
 * the source memfd on fd 3 and times them; writebench prepares the files, verifies them
 * and does the statistics. The line protocol is docs/runtimes.md.
 *
 * Methods, each as a Java program writes a file:
 *   stream          FileOutputStream.write(byte[], off, len): one write(2) per call, from
 *                   a copy the JDK makes of the array (java.io has no O_DIRECT);
 *   buffered        BufferedOutputStream (8 KiB) over that stream, flushed at the part's end;
 *   channel         FileChannel.write(ByteBuffer) of a heap buffer at the channel's
 *                   position (the JDK copies it into a temporary direct buffer per call);
 *   channel-direct  the same with a direct buffer (no copy);
 *   pwrite          FileChannel.write(heap buffer, position): threads share one file;
 *   mmap            MappedByteBuffer.put(index, byte[], off, len); force() (msync) to sync;
 *   async           AsynchronousFileChannel.write(heap buffer, position), qd requests in
 *                   flight per part, on the JDK's thread pool.
 * Durability: RandomAccessFile "rws"/"rwd" (O_SYNC, O_DSYNC) for the streams;
 * StandardOpenOption.SYNC/DSYNC and ExtendedOpenOption.DIRECT for the channels;
 * FileDescriptor.sync() (fsync) or FileChannel.force(false) (fdatasync).
 * Latency: pwrite (overwrite0), stream, buffered, channel (append).
 *
 * Build: javac -d . Runner.java   Run: java -cp . Runner, with the source memfd as fd 3.
 *
 * The data: a Java program writes from a byte[] it holds, so before every run, untimed,
 * each part's bytes are copied from the source into a heap array of its own (kept for the
 * next run of the same length); channel-direct writes from the source's own map, itself a
 * direct buffer. The JIT compiles the loops during the case's warm-up runs: one runner
 * process serves every run of a case.
 *
 * Clock: System.nanoTime() (CLOCK_MONOTONIC). CPU: the thread's CPU clock
 * (ThreadMXBean.getCurrentThreadCpuTime, CLOCK_THREAD_CPUTIME_ID), split into user and
 * system as /proc/thread-self/stat's tick counts split their own deltas. Java has no
 * sched_setaffinity: the `cpus` line is read and ignored (docs/runtimes.md).
 *
 * Longer than 600 lines because it is one self-contained program, built from one file.
 */

import com.sun.nio.file.ExtendedOpenOption;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.AsynchronousFileChannel;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

public final class Runner {
    static final List<String> METHODS =
            List.of("stream", "buffered", "channel", "channel-direct", "pwrite", "mmap", "async");
    static final Map<String, String> LATENCY =
            Map.of("pwrite", "overwrite0", "stream", "append", "buffered", "append", "channel", "append");
    /** Methods at the file position: each part needs a file of its own. */
    static final Set<String> AT_POSITION = Set.of("stream", "buffered", "channel", "channel-direct");
    static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    static final long ORIGIN = System.nanoTime();

    // ---- errors ----

    /** A failed call: the reply's error line ("call: Reason" and the errno). */
    static final class Failure extends Exception {
        final int errno;

        Failure(String text, int errno) {
            super(text, null, false, false);
            this.errno = errno;
        }

        /** An IOException of `call`: the JDK's message is the C library's strerror. */
        static Failure of(String call, Throwable e) {
            String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            return new Failure(call + ": " + message, errnoOf(message));
        }
    }

    static final class ProtocolError extends Exception {
        ProtocolError(String text) {
            super(text);
        }
    }

    /** The JDK gives strerror's text, not the number: the common ones, else 0. */
    static int errnoOf(String message) {
        String[][] known = {
            {"No space left on device", "28"}, {"Disk quota exceeded", "122"}, {"Invalid argument", "22"},
            {"Input/output error", "5"}, {"Permission denied", "13"}, {"No such file or directory", "2"},
            {"Bad file descriptor", "9"}, {"File too large", "27"}, {"Read-only file system", "30"},
            {"Operation not permitted", "1"},
        };
        for (String[] pair : known) {
            if (message.contains(pair[0])) return Integer.parseInt(pair[1]);
        }
        return 0;
    }

    // ---- clocks ----

    static double now() {
        return (System.nanoTime() - ORIGIN) * 1e-9;
    }

    /** This thread's CPU clocks: the tick counts of /proc/thread-self/stat and the exact total. */
    static long[] threadCpu() {
        long user = 0, system = 0;
        try {
            String stat = new String(Files.readAllBytes(Path.of("/proc/thread-self/stat")), StandardCharsets.US_ASCII);
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            user = Long.parseLong(fields[11]);
            system = Long.parseLong(fields[12]);
        } catch (IOException | RuntimeException e) {
            // No split: all system time below, as writebench does where ticks did not move.
        }
        return new long[] {user, system, THREADS.getCurrentThreadCpuTime()};
    }

    /** (user, sys) seconds since `before`: the total divided as the ticks divide theirs. */
    static double[] cpuSince(long[] after, long[] before) {
        double total = Math.max(0, after[2] - before[2]) * 1e-9;
        double user = Math.max(0, after[0] - before[0]), system = Math.max(0, after[1] - before[1]);
        double userShare = user + system > 0 ? total * (user / (user + system)) : 0.0;
        return new double[] {userShare, Math.max(0.0, total - userShare)};
    }

    // ---- replies ----

    static void reply(String json) {
        System.out.print(json + "\n");
        System.out.flush();
    }

    static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
    }

    static String number(Double value) {
        return value == null ? "null" : Double.toString(value);
    }

    static String interval(double[] span) {
        return span == null ? "null" : "[" + span[0] + "," + span[1] + "]";
    }

    static void replyError(long run, Failure failure) {
        reply("{\"run\":" + run + ",\"error\":" + quote(failure.getMessage()) + ",\"errno\":" + failure.errno + "}");
    }

    // ---- a case ----

    static final class Part {
        final int file;
        final long offset, length, src;

        Part(int file, long offset, long length, long src) {
            this.file = file;
            this.offset = offset;
            this.length = length;
            this.src = src;
        }
    }

    static final class Job {
        boolean latency;
        String method;
        int threads = 1, files = 1, qd = 1;
        long chunk = 1, source = -1, every = 0, bytes = 0, count = 0, warmup = 0;
        Set<String> openFlags = Set.of();
        /** Whether the JIT has been warmed for this case (`warmUp`). */
        boolean warmed;
        String end = "none", everycall = "fsync", pattern = "append";
        final List<Part> parts = new ArrayList<>();
        /** Each part's bytes in a heap array, kept between runs. */
        byte[][] heap;
        Failure sourceError;
    }

    /** The memfd on fd 3, mapped read-only once per case. */
    static MappedByteBuffer source;

    static void remap(Job job) {
        source = null;
        job.sourceError = null;
        if (job.source == 0) return;
        if (job.source > Integer.MAX_VALUE) {
            job.sourceError = new Failure("the java runner maps at most 2 GiB - 1 of source (a MappedByteBuffer's limit)", 0);
            return;
        }
        try (FileChannel channel = FileChannel.open(Path.of("/proc/self/fd/3"), StandardOpenOption.READ)) {
            source = channel.map(FileChannel.MapMode.READ_ONLY, 0, job.source);
        } catch (IOException | RuntimeException e) {
            job.sourceError = Failure.of("mmap of the source (fd 3)", e);
        }
    }

    /** Every:N counted across the case's threads (docs/runtimes.md). */
    static final class Pacing {
        final long every;
        final String call;
        final int writers;
        final boolean shared;
        long calls;
        int ended;

        Pacing(long every, String call, int writers, boolean shared) {
            this.every = every;
            this.call = call;
            this.writers = writers;
            this.shared = shared;
        }
    }

    interface Sync {
        void sync(String call) throws Failure;
    }

    /** One writer's view of every:N. */
    static final class Pacer {
        final Pacing pacing;
        final Sync sync;
        long since;

        Pacer(Pacing pacing, Sync sync) {
            this.pacing = pacing;
            this.sync = sync;
        }

        void afterCall() throws Failure {
            since++;
            long count;
            synchronized (pacing) {
                count = ++pacing.calls;
            }
            if (count % pacing.every == 0) {
                since = 0;
                sync.sync(pacing.call);
            }
        }

        void finish() throws Failure {
            if (pacing.shared) {
                boolean last;
                long left;
                synchronized (pacing) {
                    last = ++pacing.ended == pacing.writers;
                    left = pacing.calls % pacing.every;
                }
                if (last && left != 0) sync.sync(pacing.call);
            } else if (since != 0) {
                since = 0;
                sync.sync(pacing.call);
            }
        }
    }

    /**
     * Java has no munmap: a MappedByteBuffer is unmapped when the collector finds it, and
     * until then the map holds its file's blocks (deleted runs' files filled a 256 MB
     * ext4 within 15 runs). Programs that map files (Lucene's MMapDirectory) unmap at
     * close with Unsafe.invokeCleaner, public in jdk.unsupported since Java 9: so does
     * this runner, in the close interval, as the other runners munmap there.
     */
    static void unmap(MappedByteBuffer map) throws IOException {
        try {
            Class<?> unsafe = Class.forName("sun.misc.Unsafe");
            java.lang.reflect.Field field = unsafe.getDeclaredField("theUnsafe");
            field.setAccessible(true);
            unsafe.getMethod("invokeCleaner", ByteBuffer.class).invoke(field.get(null), map);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IOException("munmap (Unsafe.invokeCleaner): " + e, e);
        }
    }

    /** One file of a run, opened as its method opens it. */
    static final class Target {
        RandomAccessFile file;
        OutputStream stream; // FileOutputStream, or the BufferedOutputStream over it
        FileOutputStream raw;
        FileChannel channel;
        AsynchronousFileChannel async;
        MappedByteBuffer map;

        /** A sync: flush first for the buffered stream; force() (msync) for a map. */
        void sync(String call) throws Failure {
            boolean metadata = call.equals("fsync");
            try {
                if (stream != null) {
                    stream.flush();
                    if (metadata) raw.getFD().sync();
                    else raw.getChannel().force(false);
                } else if (map != null) {
                    map.force();
                    if (metadata) channel.force(true); // msync is a data sync; fsync adds the metadata
                } else if (async != null) {
                    async.force(metadata);
                } else {
                    channel.force(metadata);
                }
            } catch (IOException | RuntimeException e) {
                throw Failure.of(call, e);
            }
        }

        void close() throws IOException {
            if (map != null) unmap(map);
            map = null;
            if (stream != null) stream.close();
            if (file != null) file.close();
            if (channel != null) channel.close();
            if (async != null) async.close();
            stream = null;
            raw = null;
            file = null;
            channel = null;
            async = null;
        }
    }

    static Target open(Job job, String path) throws Failure {
        return open(job.method, job.openFlags, path);
    }

    static Target open(String method, Set<String> openFlags, String path) throws Failure {
        Target target = new Target();
        boolean sync = openFlags.contains("sync"), dsync = openFlags.contains("dsync");
        boolean direct = openFlags.contains("direct");
        try {
            switch (method) {
                case "stream":
                case "buffered": {
                    if (direct) throw new Failure(method + ": " + "java.io opens files without O_DIRECT", 22);
                    target.file = new RandomAccessFile(path, sync ? "rws" : dsync ? "rwd" : "rw");
                    target.raw = new FileOutputStream(target.file.getFD());
                    target.stream = target.raw;
                    break;
                }
                case "async": {
                    Set<OpenOption> options = new HashSet<>(List.of(StandardOpenOption.WRITE));
                    if (sync) options.add(StandardOpenOption.SYNC);
                    if (dsync) options.add(StandardOpenOption.DSYNC);
                    if (direct) options.add(ExtendedOpenOption.DIRECT);
                    target.async = AsynchronousFileChannel.open(Path.of(path), options, null);
                    break;
                }
                case "mmap":
                    target.channel = FileChannel.open(Path.of(path), StandardOpenOption.READ, StandardOpenOption.WRITE);
                    break;
                default: {
                    List<OpenOption> options = new ArrayList<>(List.of(StandardOpenOption.WRITE));
                    if (sync) options.add(StandardOpenOption.SYNC);
                    if (dsync) options.add(StandardOpenOption.DSYNC);
                    if (direct) options.add(ExtendedOpenOption.DIRECT);
                    target.channel = FileChannel.open(Path.of(path), options.toArray(new OpenOption[0]));
                }
            }
        } catch (IOException | RuntimeException e) {
            throw Failure.of("open", e);
        }
        return target;
    }

    static final class Run {
        final Job job;
        final Target[] targets;
        final Pacing pacing;
        final boolean ownSync;
        final CyclicBarrier barrier;
        final String[] times;
        final Failure[] errors;

        Run(Job job, int files) {
            this.job = job;
            this.targets = new Target[files];
            this.pacing = new Pacing(job.every, job.everycall, job.threads, files == 1);
            this.ownSync = !job.end.equals("none") && files > 1;
            this.barrier = job.threads > 1 ? new CyclicBarrier(job.threads) : null;
            this.times = new String[job.parts.size()];
            this.errors = new Failure[job.parts.size()];
        }

        void writePart(int index) {
            Part part = job.parts.get(index);
            Target target = targets[part.file];
            Failure error = null;
            try {
                // Methods at the file position: placed once, before the clock.
                if (target.file != null) target.file.seek(part.offset);
                else if (AT_POSITION.contains(job.method)) target.channel.position(part.offset);
            } catch (IOException e) {
                error = Failure.of("seek", e);
            }
            if (barrier != null) {
                try {
                    barrier.await();
                } catch (InterruptedException | BrokenBarrierException e) {
                    errors[index] = error != null ? error : new Failure("start of the writer threads: called off", 0);
                    return;
                }
            }
            Pacer pacer = job.every > 0 ? new Pacer(pacing, target::sync) : null;
            byte[] heap = job.heap[index];
            long[] cpu0 = threadCpu();
            double start = now();
            try {
                if (error != null) throw error;
                writeLoop(job, target, part, heap, pacer);
                if (pacer != null) pacer.finish();
            } catch (Failure failure) {
                error = failure;
            } catch (InternalError e) {
                // The JVM turns a SIGBUS in a store into the map into this error.
                error = new Failure("mmap: a store into the map faulted (SIGBUS; the file system may be full): "
                        + e.getMessage(), 0);
            } catch (RuntimeException e) {
                error = Failure.of(job.method, e);
            }
            double ended = now();
            Double synced = null;
            if (error == null && ownSync) {
                try {
                    target.sync(job.end);
                } catch (Failure failure) {
                    error = failure;
                }
                synced = now();
            }
            double[] cpu = cpuSince(threadCpu(), cpu0);
            times[index] = "{\"start\":" + start + ",\"end\":" + ended + ",\"synced\":" + number(synced)
                    + ",\"user\":" + cpu[0] + ",\"sys\":" + cpu[1] + "}";
            errors[index] = error;
        }
    }

    /** The part's calls through the method's API: the timed loop (and the warm-up's). */
    static void writeLoop(Job job, Target target, Part part, byte[] heap, Pacer pacer) throws Failure {
        switch (job.method) {
            case "stream":
            case "buffered":
                Loops.stream(target.stream, heap, job.chunk, pacer);
                break;
            case "channel":
                Loops.channel(target.channel, ByteBuffer.wrap(heap), job.chunk, -1, pacer);
                break;
            case "channel-direct":
                Loops.channel(target.channel, source.duplicate().position(0), job.chunk, -1, pacer, part.src,
                        part.length);
                break;
            case "pwrite":
                Loops.channel(target.channel, ByteBuffer.wrap(heap), job.chunk, part.offset, pacer);
                break;
            case "mmap":
                Loops.mapped(target.map, heap, part.offset, job.chunk, pacer);
                break;
            case "async":
                Loops.async(target.async, heap, part.offset, job.chunk, job.qd);
                break;
            default:
                throw new Failure("the java runner has no method " + job.method, 0);
        }
    }

    // ---- the JIT's warm-up ----

    /** Calls, and bytes, after which a loop counts as compiled (HotSpot's C2 compiles a
     *  method after about 10,000 invocations or loop iterations). */
    static final long WARM_CALLS = 20_000, WARM_BYTES = 1L << 30;

    /**
     * Once per case, before its first run, untimed: the case's loop run through the same
     * API into /dev/null (a map of a scratch file for mmap) until HotSpot has compiled it,
     * so that every run measures a warm JVM, as a long-running program is. Measured here:
     * 16 MiB runs of 4 KiB FileChannel writes took 28.6, 20.0, 16.6, 14.3 ms before
     * settling at 12-13 ms from the fifth run on. Best effort: a failure here is left to
     * the run, which reports its own.
     */
    static void warmUp(Job job) {
        Part part = job.parts.get(0);
        if (job.warmed || part.length == 0) return;
        job.warmed = true;
        Part at0 = new Part(0, 0, part.length, part.src);
        Path scratch = null;
        Target target = null;
        try {
            if (job.method.equals("mmap")) {
                Path shm = Path.of("/dev/shm");
                scratch = Files.createTempFile(Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")),
                        "writebench-warm-", ".dat");
                try (RandomAccessFile file = new RandomAccessFile(scratch.toFile(), "rw")) {
                    file.setLength(part.length);
                }
                target = open(job.method, Set.of(), scratch.toString());
                target.map = target.channel.map(FileChannel.MapMode.READ_WRITE, 0, part.length);
            } else {
                target = open(job.method, Set.of(), "/dev/null");
            }
            if (job.method.equals("buffered")) target.stream = new BufferedOutputStream(target.raw);
            long calls = 0, bytes = 0, perPass = (part.length + job.chunk - 1) / job.chunk;
            while (calls < WARM_CALLS && bytes < WARM_BYTES) {
                writeLoop(job, target, at0, job.heap[0], null);
                calls += perPass;
                bytes += part.length;
            }
        } catch (Failure | IOException | RuntimeException | InternalError e) {
            // The run itself will meet and report whatever went wrong here.
        } finally {
            try {
                if (target != null) target.close();
                if (scratch != null) Files.deleteIfExists(scratch);
            } catch (IOException ignored) {
                // A scratch file left in /dev/shm is all this could leave.
            }
        }
    }

    // ---- the writing loops: one call per chunk, short writes completed ----

    static final class Loops {
        static void stream(OutputStream out, byte[] data, long chunk, Pacer pacer) throws Failure {
            try {
                int length = data.length;
                for (int pos = 0; pos < length; ) {
                    int n = (int) Math.min(chunk, length - pos);
                    out.write(data, pos, n); // a stream takes every byte or throws
                    pos += n;
                    if (pacer != null) pacer.afterCall();
                }
                // A buffered stream's bytes are not in the kernel before the flush: part of the part.
                out.flush();
            } catch (IOException e) {
                throw Failure.of("write", e);
            }
        }

        static void channel(FileChannel channel, ByteBuffer data, long chunk, long offset, Pacer pacer)
                throws Failure {
            channel(channel, data, chunk, offset, pacer, 0, data.capacity());
        }

        /** `length` bytes of `data` from `from`, at the channel's position (offset < 0) or at `offset`. */
        static void channel(FileChannel channel, ByteBuffer data, long chunk, long offset, Pacer pacer, long from,
                long length) throws Failure {
            try {
                int end = (int) (from + length);
                for (int pos = (int) from; pos < end; ) {
                    int stop = (int) Math.min(pos + chunk, end);
                    data.limit(stop).position(pos);
                    while (data.hasRemaining()) {
                        int n = offset < 0 ? channel.write(data) : channel.write(data, offset + data.position() - from);
                        if (n == 0) throw new Failure("write: wrote 0 bytes", 0);
                    }
                    pos = stop;
                    if (pacer != null) pacer.afterCall();
                }
            } catch (IOException e) {
                throw Failure.of("write", e);
            }
        }

        static void mapped(MappedByteBuffer map, byte[] data, long offset, long chunk, Pacer pacer) throws Failure {
            int length = data.length;
            for (int pos = 0; pos < length; ) {
                int n = (int) Math.min(chunk, length - pos);
                map.put((int) offset + pos, data, pos, n);
                pos += n;
                if (pacer != null) pacer.afterCall();
            }
        }

        /** `qd` writes in flight; the oldest is waited for before the next is issued. */
        static void async(AsynchronousFileChannel channel, byte[] data, long offset, long chunk, int qd)
                throws Failure {
            ArrayDeque<Future<Integer>> flight = new ArrayDeque<>();
            ArrayDeque<ByteBuffer> buffers = new ArrayDeque<>();
            int length = data.length;
            try {
                for (int pos = 0; pos < length || !flight.isEmpty(); ) {
                    if (pos < length && flight.size() < Math.max(1, qd)) {
                        int n = (int) Math.min(chunk, length - pos);
                        ByteBuffer buffer = ByteBuffer.wrap(data, pos, n);
                        flight.add(channel.write(buffer, offset + pos));
                        buffers.add(buffer);
                        pos += n;
                        continue;
                    }
                    Future<Integer> oldest = flight.poll();
                    ByteBuffer buffer = buffers.poll();
                    int n = oldest.get();
                    if (n <= 0 && buffer.hasRemaining()) throw new Failure("write: wrote 0 bytes", 0);
                    // A short write: the rest goes again, where it belongs (the buffer's
                    // position is the index in the part's array), and is waited for.
                    while (buffer.hasRemaining()) {
                        int wrote = channel.write(buffer, offset + buffer.position()).get();
                        if (wrote <= 0) throw new Failure("write: wrote 0 bytes", 0);
                    }
                }
            } catch (ExecutionException e) {
                throw Failure.of("write", e.getCause());
            } catch (InterruptedException e) {
                throw new Failure("write: interrupted", 4);
            }
        }
    }

    // ---- a run ----

    static void checkLayout(Job job, int files) throws Failure {
        if (files != job.files) throw new Failure(files + " file lines for files=" + job.files, 0);
        if (job.parts.size() != job.threads)
            throw new Failure(job.parts.size() + " part lines for threads=" + job.threads, 0);
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < job.parts.size(); i++) {
            Part part = job.parts.get(i);
            if (part.file >= files) throw new Failure("part " + i + ": file " + part.file + " of " + files, 0);
            if (part.src + part.length > job.source)
                throw new Failure("part " + i + ": source bytes beyond the source's " + job.source, 0);
            if (part.length > Integer.MAX_VALUE - 8)
                throw new Failure("part " + i + ": more than 2 GiB does not fit one Java array", 0);
            if (AT_POSITION.contains(job.method) && !seen.add(part.file))
                throw new Failure(job.method + " writes at the file position: each part needs a file of its own", 0);
        }
    }

    /** Untimed: the source in memory, and each part's bytes in its heap array. */
    static void prepare(Job job) {
        if (source == null) return;
        source.load(); // writebench gave the memfd's pages back after the last run
        if (job.heap == null || job.heap.length != job.parts.size()) job.heap = new byte[job.parts.size()][];
        if (job.method.equals("channel-direct")) return;
        for (int i = 0; i < job.parts.size(); i++) {
            Part part = job.parts.get(i);
            if (job.heap[i] == null || job.heap[i].length != part.length) job.heap[i] = new byte[(int) part.length];
            source.get((int) part.src, job.heap[i], 0, (int) part.length);
        }
    }

    static void mapFiles(Job job, Run run) throws Failure {
        for (int file = 0; file < run.targets.length; file++) {
            long want = 0;
            for (Part part : job.parts) if (part.file == file) want = Math.max(want, part.offset + part.length);
            try {
                long size = run.targets[file].channel.size();
                if (size < want || (want > 0 && size == 0)) throw new Failure("mmap cannot extend a file", 0);
                if (size > Integer.MAX_VALUE)
                    throw new Failure("a MappedByteBuffer maps at most 2 GiB - 1", 0);
                if (size > 0) run.targets[file].map = run.targets[file].channel.map(FileChannel.MapMode.READ_WRITE, 0, size);
            } catch (IOException e) {
                throw Failure.of("mmap", e);
            }
        }
    }

    static void closeAll(Run run) throws Failure {
        Failure failure = null;
        for (Target target : run.targets) {
            if (target == null) continue;
            try {
                target.close();
            } catch (IOException | RuntimeException e) {
                if (failure == null) failure = Failure.of("close", e);
            }
        }
        if (failure != null) throw failure;
    }

    static void runCase(Job job, long runId, List<String> paths) throws Failure {
        checkLayout(job, paths.size());
        if (job.every > 0 && job.method.equals("async"))
            throw new Failure("every:N is not implemented for async: its writes end in the pool's own time", 0);
        prepare(job);
        warmUp(job);
        Run run = new Run(job, paths.size());
        try {
            for (int file = 0; file < paths.size(); file++) run.targets[file] = open(job, paths.get(file));
            double setupStart = now();
            if (job.method.equals("mmap")) mapFiles(job, run);
            if (job.method.equals("buffered"))
                for (Target target : run.targets) target.stream = new BufferedOutputStream(target.raw);
            double setup = now() - setupStart;

            if (job.threads == 1) {
                run.writePart(0);
            } else {
                List<Thread> workers = new ArrayList<>();
                for (int i = 0; i < job.threads; i++) {
                    final int index = i;
                    Thread worker = new Thread(() -> run.writePart(index), "writer-" + i);
                    worker.start();
                    workers.add(worker);
                }
                for (Thread worker : workers) {
                    try {
                        worker.join();
                    } catch (InterruptedException e) {
                        throw new Failure("interrupted", 4);
                    }
                }
            }
            for (Failure error : run.errors) if (error != null) throw error;

            long[] cpu0 = threadCpu();
            double[] sync = null;
            if (!job.end.equals("none") && !run.ownSync) {
                double syncStart = now();
                for (Target target : run.targets) target.sync(job.end);
                sync = new double[] {syncStart, now()};
            }
            double closeStart = now();
            closeAll(run);
            double[] close = {closeStart, now()};
            double[] cpu = cpuSince(threadCpu(), cpu0);
            reply("{\"run\":" + runId + ",\"setup\":" + setup + ",\"parts\":[" + String.join(",", run.times)
                    + "],\"sync\":" + interval(sync) + ",\"close\":" + interval(close) + ",\"user\":" + cpu[0]
                    + ",\"sys\":" + cpu[1] + "}");
        } finally {
            try {
                closeAll(run); // after a failure: untimed cleanup
            } catch (Failure ignored) {
                // The run's first error is the one reported.
            }
        }
    }

    // ---- latency: each operation timed alone ----

    interface Operation {
        void run() throws IOException, Failure;
    }

    /** One latency operation of `method` on `target`: the write of `data`, whole. */
    static Operation operation(String method, Target target, byte[] data) {
        if (method.equals("buffered")) target.stream = new BufferedOutputStream(target.raw);
        ByteBuffer buffer = ByteBuffer.wrap(data);
        switch (method) {
            case "pwrite":
                return () -> {
                    buffer.clear();
                    while (buffer.hasRemaining()) target.channel.write(buffer, buffer.position());
                };
            case "channel":
                return () -> {
                    buffer.clear();
                    while (buffer.hasRemaining()) target.channel.write(buffer);
                };
            default:
                // The flush is part of a buffered operation: before it the bytes are in Java's buffer.
                return () -> {
                    target.stream.write(data);
                    target.stream.flush();
                };
        }
    }

    /**
     * As `warmUp`, for a latency loop: its operation into /dev/null until HotSpot has
     * compiled it (each loop is a runner process of its own). With only the loop's own
     * 100 untimed operations, Java's positional 4 KiB O_DSYNC write on tmpfs measured
     * 5.9 µs at the median; warm, 1.2 µs.
     */
    static void warmUpLatency(Job job, byte[] data) {
        if (data.length == 0) return;
        Target target = null;
        try {
            target = open(job.method, Set.of(), "/dev/null");
            Operation operation = operation(job.method, target, data);
            for (long done = 0; done < WARM_CALLS && done * data.length < WARM_BYTES; done++) operation.run();
        } catch (Failure | IOException | RuntimeException e) {
            // The loop itself will meet and report whatever went wrong here.
        } finally {
            try {
                if (target != null) target.close();
            } catch (IOException ignored) {
                // /dev/null: nothing to lose.
            }
        }
    }

    static void runLatency(Job job, long runId, List<String> paths) throws Failure {
        String method = job.method;
        if (!job.pattern.equals(LATENCY.get(method)))
            throw new Failure("the java runner's latency methods are pwrite (overwrite0) and stream, buffered, "
                    + "channel (append), not " + method + " (" + job.pattern + ")", 0);
        if (paths.size() != 1 || job.bytes > job.source)
            throw new Failure("latency needs one file and bytes <= source", 0);
        if (source != null) source.load();
        byte[] data = new byte[(int) job.bytes];
        if (source != null) source.get(0, data, 0, data.length);
        warmUpLatency(job, data);
        Target target = open(job, paths.get(0));
        try {
            Operation operation = operation(method, target, data);
            long total = job.warmup + job.count;
            long[] ops = new long[(int) job.count];
            List<Long> syncs = new ArrayList<>();
            long calls = 0;
            long[] cpu0 = threadCpu();
            double loopStart = now();
            for (long number = 0; number < total; number++) {
                if (number == job.warmup) {
                    cpu0 = threadCpu();
                    loopStart = now();
                }
                long t0 = System.nanoTime();
                try {
                    operation.run();
                } catch (IOException e) {
                    throw Failure.of(method, e);
                }
                long t1 = System.nanoTime(), t2 = t1;
                calls++;
                if (job.every > 0 && calls % job.every == 0) {
                    target.sync(job.everycall);
                    t2 = System.nanoTime();
                    if (number >= job.warmup) syncs.add(t2 - t1);
                }
                if (number >= job.warmup) ops[(int) (number - job.warmup)] = t2 - t0;
            }
            double loopEnd = now();
            double[] sync = null;
            if (!job.end.equals("none")) {
                double syncStart = now();
                target.sync(job.end);
                sync = new double[] {syncStart, now()};
            }
            double[] cpu = cpuSince(threadCpu(), cpu0);
            StringBuilder out = new StringBuilder("{\"run\":").append(runId).append(",\"loop\":[").append(loopStart)
                    .append(',').append(loopEnd).append("],\"ops\":[");
            for (int i = 0; i < ops.length; i++) out.append(i == 0 ? "" : ",").append(ops[i]);
            out.append("],\"syncs\":[");
            for (int i = 0; i < syncs.size(); i++) out.append(i == 0 ? "" : ",").append(syncs.get(i));
            out.append("],\"sync\":").append(interval(sync)).append(",\"user\":").append(cpu[0]).append(",\"sys\":")
                    .append(cpu[1]).append('}');
            reply(out.toString());
        } finally {
            try {
                target.close();
            } catch (IOException ignored) {
                // Closing after the reply: nothing more to report.
            }
        }
    }

    // ---- parsing ----

    static long parseNumber(String value) throws ProtocolError {
        if (value.isEmpty() || !value.chars().allMatch(Character::isDigit)) throw new ProtocolError("bad number");
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new ProtocolError("bad number");
        }
    }

    static Job parseHeader(String[] words, boolean latency) throws ProtocolError {
        Job job = new Job();
        job.latency = latency;
        for (int i = 1; i < words.length; i++) {
            int eq = words[i].indexOf('=');
            if (eq < 0) throw new ProtocolError("expected key=value");
            String key = words[i].substring(0, eq), value = words[i].substring(eq + 1);
            switch (key) {
                case "method": job.method = value; break;
                case "threads": job.threads = (int) parseNumber(value); break;
                case "chunk": job.chunk = parseNumber(value); break;
                case "qd": job.qd = (int) parseNumber(value); break;
                case "files": job.files = (int) parseNumber(value); break;
                case "every": job.every = parseNumber(value); break;
                case "source": job.source = parseNumber(value); break;
                case "bytes": job.bytes = parseNumber(value); break;
                case "count": job.count = parseNumber(value); break;
                case "warmup": job.warmup = parseNumber(value); break;
                case "iov": parseNumber(value); break;
                case "open":
                    job.openFlags = value.equals("-") ? Set.of() : Set.of(value.split(","));
                    if (!Set.of("sync", "dsync", "direct").containsAll(job.openFlags)) throw new ProtocolError("bad open flags");
                    break;
                case "end":
                    if (!Set.of("fsync", "fdatasync", "none").contains(value)) throw new ProtocolError("bad end");
                    job.end = value;
                    break;
                case "everycall":
                    if (!Set.of("fsync", "fdatasync").contains(value)) throw new ProtocolError("bad everycall");
                    job.everycall = value;
                    break;
                case "pattern":
                    if (!Set.of("overwrite0", "append").contains(value)) throw new ProtocolError("bad pattern");
                    job.pattern = value;
                    break;
                default:
                    // Other keys mean nothing to this runner.
            }
        }
        if (job.method == null || job.source < 0) throw new ProtocolError("method= and source= are required");
        if (job.threads < 1 || job.chunk < 1 || job.files < 1) throw new ProtocolError("threads, chunk and files must be at least 1");
        remap(job);
        return job;
    }

    static void serve(BufferedReader in) throws IOException, ProtocolError {
        Job job = null;
        Long runId = null;
        List<String> paths = new ArrayList<>();
        for (String line; (line = in.readLine()) != null; ) {
            try {
                if (line.isEmpty()) continue;
                if (line.startsWith("file ")) {
                    if (runId == null) throw new ProtocolError("file before run");
                    paths.add(line.substring(5));
                    continue;
                }
                String[] words = line.trim().split("\\s+");
                switch (words[0]) {
                    case "case":
                    case "latency":
                        job = parseHeader(words, words[0].equals("latency"));
                        break;
                    case "part":
                        if (job == null || job.latency || words.length != 5) throw new ProtocolError("bad part line");
                        job.parts.add(new Part((int) parseNumber(words[1]), parseNumber(words[2]), parseNumber(words[3]),
                                parseNumber(words[4])));
                        break;
                    case "run":
                        if (job == null || words.length != 2) throw new ProtocolError("bad run line");
                        try {
                            runId = Long.parseLong(words[1]);
                        } catch (NumberFormatException e) {
                            throw new ProtocolError("bad run line");
                        }
                        paths = new ArrayList<>();
                        break;
                    case "cpus":
                        // Java has no sched_setaffinity: the scheduler places the writers.
                        if (runId == null || words.length < 2) throw new ProtocolError("bad cpus line");
                        for (int i = 1; i < words.length; i++) parseNumber(words[i]);
                        break;
                    case "go":
                        if (runId == null || words.length != 1) throw new ProtocolError("go before run");
                        try {
                            if (job.sourceError != null) throw job.sourceError;
                            if (job.latency) runLatency(job, runId, paths);
                            else if (!METHODS.contains(job.method))
                                throw new Failure("the java runner has no method " + job.method, 0);
                            else runCase(job, runId, paths);
                        } catch (Failure failure) {
                            replyError(runId, failure);
                        } catch (RuntimeException | OutOfMemoryError e) {
                            replyError(runId, Failure.of(e.getClass().getSimpleName(), e));
                        }
                        break;
                    case "quit":
                        return;
                    default:
                        throw new ProtocolError("unknown command");
                }
            } catch (ProtocolError e) {
                String shown = line.length() > 200 ? line.substring(0, 200) : line;
                throw new ProtocolError(e.getMessage() + ": " + shown);
            }
        }
    }

    public static void main(String[] args) throws IOException {
        reply("{\"runner\":\"java\",\"protocol\":1,\"version\":" + quote("Java " + Runtime.version()) + ",\"methods\":["
                + String.join(",", METHODS.stream().map(Runner::quote).toArray(String[]::new)) + "]}");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            serve(in);
        } catch (ProtocolError e) {
            reply("{\"run\":-1,\"error\":" + quote(e.getMessage()) + ",\"errno\":0}");
            System.exit(2);
        }
        System.exit(0);
    }
}
