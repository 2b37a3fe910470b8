'use strict';
/*
 * writebench's Node.js runner (`--runtimes node`).
 *
 * It writes the parts writebench hands it from the source memfd on fd 3 and times them;
 * writebench prepares the files, verifies them and does the statistics. The line protocol
 * is docs/runtimes.md; runners/runner.py is the model this file follows.
 *
 * Methods:
 *   writeSync       fs.writeSync(fd, buffer, offset, length, null): write(2) at the file position.
 *   promises        await fileHandle.write(buffer, offset, length, null), one at a time, at
 *                   the file position; syncs are await fileHandle.sync() / datasync().
 *   stream          fs.createWriteStream over the descriptor (default highWaterMark), waiting
 *                   for 'drain' when write() says so; the part ends at 'finish'. No every:N.
 *   write-callback  fs.write(fd, buffer, offset, length, position, callback) with qd requests
 *                   in flight per part on libuv's thread pool, positional. No every:N.
 * Latency: writeSync (overwrite0 and append), promises (append).
 *
 * Run: node runner.js, with the source memfd as fd 3 and the protocol on stdin and stdout.
 * Node.js 20 or later on Linux, no packages. With two writers or more, each is a
 * worker_threads Worker started from this same file (one writer is the main thread); they share the source and two small counters (the
 * barrier, every:N) as SharedArrayBuffers, and use the descriptors the main thread opened.
 *
 * About 700 lines, more than the ~600 aimed at: four methods of three kinds (synchronous,
 * awaited, callbacks), each in the main thread or a Worker, which must hand results,
 * errors and FileHandles back by message and meet at a barrier of their own making.
 *
 * Clock: process.hrtime.bigint(), CLOCK_MONOTONIC, the same in every thread; seconds from
 * the main thread's start value, handed to the workers, so doubles keep nanoseconds.
 * CPU: every user/sys is null. Node 20 has no per-thread CPU clock (process.threadCpuUsage
 * arrived in 23.9) and process.cpuUsage() mixes the threads. The `cpus` line is accepted
 * and ignored: Node.js has no sched_setaffinity.
 * The source is read, not mapped: JavaScript cannot map a descriptor, so each run starts
 * by reading the whole memfd into a SharedArrayBuffer (untimed, where the other runners
 * fault their map's pages in), and every write is made from a Buffer view of it.
 */

const fs = require('fs');
const fsp = require('fs/promises');
const readline = require('readline');
const util = require('util');
const { once } = require('events');
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');

const SOURCE_FD = 3;
const METHODS = ['writeSync', 'promises', 'stream', 'write-callback'];
// Methods whose calls go to the file position, which two parts of one file would share.
const AT_POSITION = new Set(['writeSync', 'promises', 'stream']);
// Of those, the ones that cannot place the position anywhere but 0 (Node.js has no
// lseek; the stream takes `start` and writes positionally itself).
const FROM_ZERO = new Set(['writeSync', 'promises']);
const NO_EVERY = new Set(['stream', 'write-callback']);
const { O_WRONLY, O_SYNC, O_DSYNC } = fs.constants;
const OPEN_FLAGS = { sync: O_SYNC, dsync: O_DSYNC, direct: 0 };
const NO_DIRECT = "Node.js cannot align a Buffer's address for O_DIRECT";
// A read(2) of the source takes at most this much at once (Node refuses lengths >= 2 GiB).
const READ_PIECE = 1 << 30;

// One origin for every thread of the process: the main thread's, given to the workers.
const ORIGIN = isMainThread ? process.hrtime.bigint() : workerData.origin;
const now = () => Number(process.hrtime.bigint() - ORIGIN) / 1e9;

/** A failed call: the reply's error line. */
class Failure extends Error {
  constructor(call, errno = 0, why = null) {
    super(why || errno ? `${call}: ${why || `errno ${errno}`}` : call);
    this.errno = errno || 0;
  }
}

class ProtocolError extends Error {}

/** A Node.js error as "<call>: <OS message>": libuv's message with a capital first
 *  letter, so the text reads as the other runners' strerror does; errno made positive. */
function failure(call, err) {
  if (err instanceof Failure) return err;
  if (err && typeof err.errno === 'number' && err.errno < 0) {
    const entry = util.getSystemErrorMap().get(err.errno);
    const text = entry ? entry[1] : String(err.message);
    return new Failure(call, -err.errno, text.charAt(0).toUpperCase() + text.slice(1));
  }
  return new Failure(call, 0, err && err.message ? err.message : String(err));
}

/** Errors cross from a worker as plain objects. */
const asPlain = (f) => f && { message: f.message, errno: f.errno, calledOff: !!f.calledOff };
const fromPlain = (p) => p && Object.assign(new Failure(''), p);

function reply(obj) {
  // Synchronous for a pipe on Linux: the line is out before the next command is read.
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// ---- syncing and closing one file: a descriptor, or a FileHandle for `promises` ----

/** A promise for a FileHandle; for a descriptor the sync is done on return (null), so a
 *  loop of synchronous calls stays without an await. */
function syncFile(file, call) {
  if (file.fh) {
    const done = call === 'fdatasync' ? file.fh.datasync() : file.fh.sync();
    return done.catch((e) => { throw failure(call, e); });
  }
  try {
    (call === 'fdatasync' ? fs.fdatasyncSync : fs.fsyncSync)(file.fd);
  } catch (e) {
    throw failure(call, e);
  }
  return null;
}

async function closeFile(file) {
  try {
    if (file.fh) await file.fh.close();
    else if (file.fd != null) fs.closeSync(file.fd);
  } catch (e) {
    throw failure('close', e);
  } finally {
    file.fh = null;
    file.fd = null;
  }
}

// ---- every:N, counted across the case's threads (docs/runtimes.md) ----
// The count lives in an Int32Array on a SharedArrayBuffer, [calls, writers ended], so
// every thread adds to the same one; a writer syncs when its own call made the count a
// multiple of N.

class Pacer {
  constructor(counts, every, writers, shared) {
    this.counts = counts;
    this.every = every;
    this.writers = writers;
    this.shared = shared;
    this.since = 0; // this writer's calls not yet synced
  }

  /** Counts one call; true when this writer must sync now. */
  count() {
    this.since += 1;
    if ((Atomics.add(this.counts, 0, 1) + 1) % this.every !== 0) return false;
    this.since = 0;
    return true;
  }

  /** As the part ends: true when this writer must sync the calls not yet synced. One
   *  file: the last writer to end, if the count is not a multiple of N. A file per
   *  thread: each writer whose file has unsynced calls. */
  atEnd() {
    if (this.shared) {
      const last = Atomics.add(this.counts, 1, 1) + 1 === this.writers;
      return last && Atomics.load(this.counts, 0) % this.every !== 0;
    }
    const left = this.since > 0;
    this.since = 0;
    return left;
  }
}

// ---- the writing loops: `buf` is the part's view of the source (no copy), a call per
// chunk, short writes completed. fs calls retry EINTR themselves (libuv). ----

function loopWriteSync(file, buf, chunk, pacer, call) {
  const length = buf.length;
  let pos = 0;
  while (pos < length) {
    const stop = Math.min(pos + chunk, length);
    while (pos < stop) {
      let n;
      try {
        n = fs.writeSync(file.fd, buf, pos, stop - pos, null);
      } catch (e) {
        throw failure('write', e);
      }
      if (n === 0) throw new Failure('write', 0, 'wrote 0 bytes');
      pos += n;
    }
    if (pacer && pacer.count()) syncFile(file, call);
  }
}

async function loopPromises(file, buf, chunk, pacer, call) {
  const length = buf.length;
  let pos = 0;
  while (pos < length) {
    const stop = Math.min(pos + chunk, length);
    while (pos < stop) {
      let n;
      try {
        n = (await file.fh.write(buf, pos, stop - pos, null)).bytesWritten;
      } catch (e) {
        throw failure('write', e);
      }
      if (n === 0) throw new Failure('write', 0, 'wrote 0 bytes');
      pos += n;
    }
    if (pacer && pacer.count()) await syncFile(file, call);
  }
}

async function loopStream(stream, buf, chunk) {
  const length = buf.length;
  try {
    for (let pos = 0; pos < length; pos += chunk) {
      // The stream keeps the view until its write(2) is done; it copies nothing.
      if (!stream.write(buf.subarray(pos, Math.min(pos + chunk, length)))) await once(stream, 'drain');
    }
    // 'finish': every byte handed to the kernel. once() rejects on 'error'; no error
    // can be emitted between write() and once(), which run in the same tick.
    stream.end();
    await once(stream, 'finish');
  } catch (e) {
    throw failure(e.syscall || 'write', e);
  }
}

/** qd fs.write calls in flight; each callback issues the next chunk, or the rest of its
 *  own after a short write. An error ends the part once the calls in flight are back,
 *  so nothing writes into a descriptor being closed. */
function loopCallback(file, buf, offset, chunk, qd) {
  const length = buf.length;
  return new Promise((resolve, reject) => {
    let next = 0;
    let inFlight = 0;
    let failed = null;
    const done = () => {
      if (inFlight === 0) (failed ? reject(failed) : resolve());
    };
    const issue = (from, len) => {
      fs.write(file.fd, buf, from, len, offset + from, (err, n) => {
        inFlight -= 1;
        if (!failed && err) failed = failure('write', err);
        else if (!failed && n === 0) failed = new Failure('write', 0, 'wrote 0 bytes');
        if (!failed && n < len) return issue(from + n, len - n);
        if (!failed && next < length) return issueNext();
        done();
      });
      inFlight += 1; // after the call: one that throws at once has nothing in flight
    };
    const issueNext = () => {
      const from = next;
      next = Math.min(from + chunk, length);
      issue(from, next - from);
    };
    try {
      for (let i = 0; i < qd && next < length; i++) issueNext();
    } catch (e) {
      failed = failed || failure('write', e); // an argument fs.write refused at once
    }
    done();
  });
}

/** The part's calls through the method's API, for the timed span and the warm-up: a
 *  promise for the asynchronous methods, nothing for writeSync, whose loop must not give
 *  the event loop a turn. */
function writeLoop(job, file, stream, buf, offset, pacer) {
  switch (job.method) {
    case 'writeSync':
      return loopWriteSync(file, buf, job.chunk, pacer, job.everycall);
    case 'promises':
      return loopPromises(file, buf, job.chunk, pacer, job.everycall);
    case 'stream':
      return loopStream(stream, buf, job.chunk);
    case 'write-callback':
      return loopCallback(file, buf, offset, job.chunk, job.qd);
    default:
      throw new Failure(`the node runner has no method ${job.method}`);
  }
}

/** A write stream over an open descriptor, which writebench's protocol closes itself. */
function newStream(fd, start) {
  const stream = fs.createWriteStream('', { fd, autoClose: false, start });
  stream.on('error', () => {}); // seen through once(); never an uncaught 'error'
  return stream;
}

// ---- the JIT's warm-up ----

// Calls, bytes and seconds after which a loop counts as compiled by V8's optimizing tier.
const WARM_CALLS = 20000;
const WARM_BYTES = 2 ** 30;
const WARM_SECONDS = 0.5;

/** Untimed, before the barrier: the part's loop through the same API into /dev/null
 *  until V8 has optimized it (20,000 calls, 1 GiB or half a second, whichever comes
 *  first), so that runs measure warm code, as a long-running program's is. Each Worker is
 *  an isolate with a JIT of its own, so each warms itself; the main thread once per
 *  case. Measured here: 16 MiB runs of 4 KiB stream writes took 101, 93, 76, 56 ms
 *  before settling at 43 ms from the fifth run on. Best effort: the run reports its own
 *  errors. */
async function warmUp(job, buf, offset) {
  if (buf.length === 0) return;
  const file = {};
  try {
    file.fd = fs.openSync('/dev/null', O_WRONLY);
    if (job.method === 'promises') file.fh = await fsp.open('/dev/null', O_WRONLY);
    const started = now();
    for (let calls = 0, bytes = 0; calls < WARM_CALLS && bytes < WARM_BYTES && now() - started < WARM_SECONDS;) {
      const stream = job.method === 'stream' ? newStream(file.fd, 0) : null;
      const pending = writeLoop(job, file, stream, buf, offset, null);
      if (pending) await pending;
      calls += Math.ceil(buf.length / job.chunk);
      bytes += buf.length;
    }
  } catch (e) {
    // The run itself meets and reports whatever went wrong here.
  } finally {
    if (file.fh) await file.fh.close().catch(() => {});
    if (file.fd != null) fs.closeSync(file.fd);
  }
}

// ---- one writer: the main thread's only one, or a worker's ----

/** Arrives at the barrier and waits for every writer; false when the run was called off
 *  (a worker that never arrived). Atomics.wait blocks this worker's thread only. */
function barrierWait(barrier, writers) {
  if (Atomics.add(barrier, 0, 1) + 1 === writers) Atomics.notify(barrier, 0);
  let seen;
  while ((seen = Atomics.load(barrier, 0)) < writers) Atomics.wait(barrier, 0, seen);
  return Atomics.load(barrier, 1) === 0;
}

/** Writes part `index`. ctx: job, index, sab, file ({fd} or {fh}, or {path} for a
 *  worker's `promises`), barrier, counts, shared, ownSync. Returns the part's times,
 *  its error, its set-up seconds, and the file (whose FileHandle the caller closes). */
async function writePart(ctx) {
  const { job, index } = ctx;
  const [, offset, length, src] = job.parts[index];
  const file = ctx.file;
  let error = null;
  let stream = null;
  let setup = 0;
  try {
    if (file.path != null) {
      // A worker opens its own FileHandle: one cannot be used from two threads.
      try {
        file.fh = await fsp.open(file.path, O_WRONLY | job.openFlags);
      } catch (e) {
        throw failure('open', e);
      }
    }
    const setupStart = now();
    if (job.method === 'stream') stream = newStream(file.fd, offset);
    setup = now() - setupStart;
  } catch (e) {
    error = failure('set-up', e);
  }
  if (ctx.warm) await warmUp(job, Buffer.from(ctx.sab, src, length), offset);
  if (ctx.barrier && !barrierWait(ctx.barrier, job.threads)) {
    error = error || Object.assign(new Failure('start of the writer threads', 0, 'called off'), { calledOff: true });
  }
  const buf = Buffer.from(ctx.sab, src, length);
  const call = job.everycall;
  const pacer = job.every ? new Pacer(ctx.counts, job.every, job.threads, ctx.shared) : null;
  const start = now();
  try {
    if (error) throw error;
    const pendingLoop = writeLoop(job, file, stream, buf, offset, pacer);
    if (pendingLoop) await pendingLoop;
    // Awaited only when it is a promise: writeSync's span gets no turn of the event loop.
    const pending = pacer && pacer.atEnd() ? syncFile(file, call) : null;
    if (pending) await pending;
  } catch (e) {
    error = failure(job.method, e);
  }
  const end = now();
  let synced = null;
  if (!error && ctx.ownSync) {
    try {
      const pending = syncFile(file, job.end);
      if (pending) await pending;
    } catch (e) {
      error = e;
    }
    synced = now();
  }
  return { times: { start, end, synced, user: null, sys: null }, error, setup, file };
}

/** A worker: writes its part and posts the result, its FileHandle transferred back so
 *  the main thread closes it inside the close interval. */
async function workerMain() {
  const d = workerData;
  const ctx = { ...d, file: d.file, barrier: new Int32Array(d.barrier), counts: new Int32Array(d.counts) };
  const result = await writePart(ctx);
  const fh = result.file.fh;
  parentPort.postMessage(
    { times: result.times, error: asPlain(result.error), setup: result.setup, fh: fh || null },
    fh ? [fh] : [],
  );
}

// ---- a case ----

function newJob(latency) {
  return {
    latency, method: null, threads: 1, chunk: 1, iov: 1, qd: 1, files: 1, openFlags: 0, direct: false,
    end: 'none', every: 0, everycall: 'fsync', source: null, pattern: 'append', bytes: 0, count: 0,
    warmup: 0, parts: [], sourceError: null, warmed: false,
  };
}

/** The source: one SharedArrayBuffer per case, filled from fd 3 before each run. */
const SOURCE = { sab: new SharedArrayBuffer(0) };

function allocateSource(job) {
  if (SOURCE.sab.byteLength === job.source) return;
  SOURCE.sab = new SharedArrayBuffer(0); // let the old one go before the new one is made
  try {
    SOURCE.sab = new SharedArrayBuffer(job.source);
  } catch (e) {
    job.sourceError = new Failure(`allocation of the source (${job.source} bytes)`, 0, e.message);
  }
}

/** Reads the whole memfd into the SharedArrayBuffer, positional reads from 0: writebench
 *  rewrote it for this run and punches its pages out after, so this is the untimed
 *  preparation the other runners do by faulting their map in. */
function readSource() {
  const sab = SOURCE.sab;
  let pos = 0;
  while (pos < sab.byteLength) {
    const want = Math.min(READ_PIECE, sab.byteLength - pos);
    let n;
    try {
      n = fs.readSync(SOURCE_FD, new Uint8Array(sab, pos, want), 0, want, pos);
    } catch (e) {
      throw failure('read of the source (fd 3)', e);
    }
    if (n === 0) throw new Failure('read of the source (fd 3)', 0, `it ends at ${pos} of ${sab.byteLength} bytes`);
    pos += n;
  }
}

function checkLayout(job, nfiles) {
  if (job.direct) throw new Failure(NO_DIRECT);
  if (job.every && NO_EVERY.has(job.method)) throw new Failure(`every:N is not implemented for ${job.method}`);
  if (nfiles !== job.files) throw new Failure(`${nfiles} file lines for files=${job.files}`);
  if (job.parts.length !== job.threads) throw new Failure(`${job.parts.length} part lines for threads=${job.threads}`);
  const seen = new Set();
  job.parts.forEach(([file, offset, length, src], i) => {
    if (file >= nfiles) throw new Failure(`part ${i}: file ${file} of ${nfiles}`);
    if (src + length > job.source) {
      throw new Failure(`part ${i}: source bytes ${src}+${length} beyond the source's ${job.source}`);
    }
    if (AT_POSITION.has(job.method) && seen.has(file)) {
      throw new Failure(`${job.method} writes at the file position: each part needs a file of its own`);
    }
    if (FROM_ZERO.has(job.method) && offset !== 0) {
      throw new Failure(`${job.method} writes at the file position and Node.js has no seek: a part must start at offset 0`);
    }
    seen.add(file);
  });
}

/** Opens every file O_WRONLY plus the case's flags (never O_CREAT or O_TRUNC: the files
 *  exist in their state). `promises` opens FileHandles; with workers, each opens its own. */
async function openFiles(job, paths, files) {
  try {
    for (const path of paths) {
      if (job.method !== 'promises') files.push({ fd: fs.openSync(path, O_WRONLY | job.openFlags) });
      else if (job.threads === 1) files.push({ fh: await fsp.open(path, O_WRONLY | job.openFlags) });
      else files.push({ path });
    }
  } catch (e) {
    throw failure('open', e);
  }
}

/** Starts a Worker per part and collects their results. A worker that dies before it
 *  posts calls the run off: the barrier is opened for the others, who report it. */
async function runWorkers(job, files, shared, ownSync) {
  const barrierSab = new SharedArrayBuffer(8); // [arrived, called off]
  const barrier = new Int32Array(barrierSab);
  const counts = new SharedArrayBuffer(8); // every:N: [calls, writers ended]
  const callOff = () => {
    if (Atomics.compareExchange(barrier, 1, 0, 1) === 0) {
      Atomics.add(barrier, 0, job.threads);
      Atomics.notify(barrier, 0);
    }
  };
  const results = new Array(job.threads).fill(null);
  const exits = [];
  const posted = [];
  let startError = null;
  for (let index = 0; index < job.threads; index++) {
    const f = files[job.parts[index][0]];
    const data = {
      job, index, sab: SOURCE.sab, origin: ORIGIN, barrier: barrierSab, counts, shared, ownSync, warm: true,
      file: f.path != null ? { path: f.path } : { fd: f.fd },
    };
    let worker;
    try {
      worker = new Worker(__filename, { workerData: data, stdout: false, stdin: false });
    } catch (e) {
      startError = failure('start of a writer thread', e);
      callOff();
      break;
    }
    posted.push(new Promise((resolve) => {
      let failedWith = null;
      worker.on('message', (m) => {
        results[index] = { times: m.times, error: fromPlain(m.error), setup: m.setup, fh: m.fh };
        resolve();
      });
      worker.on('error', (e) => { failedWith = e; });
      worker.on('exit', (code) => {
        if (!results[index]) {
          const why = failedWith ? failedWith.message : `exit status ${code}`;
          results[index] = { error: new Failure('writer thread', 0, why) };
          callOff();
        }
        resolve();
      });
    }));
    exits.push(new Promise((resolve) => worker.on('exit', resolve))); // once() would reject on 'error'
  }
  await Promise.all(posted);
  return { results, exits, startError };
}

async function runCase(job, runId, paths) {
  checkLayout(job, paths.length);
  readSource();
  const shared = paths.length === 1;
  const ownSync = job.end !== 'none' && paths.length > 1;
  const files = [];
  let exits = [];
  let out;
  try {
    await openFiles(job, paths, files);
    let parts;
    let setup;
    if (job.threads === 1) {
      const counts = new Int32Array(new SharedArrayBuffer(8));
      const warm = !job.warmed; // the main thread's JIT stays warm for the case's later runs
      job.warmed = true;
      const r = await writePart({ job, index: 0, sab: SOURCE.sab, file: files[job.parts[0][0]], barrier: null, counts, shared, ownSync, warm });
      if (r.error) throw r.error;
      parts = [r.times];
      setup = r.setup;
    } else {
      const w = await runWorkers(job, files, shared, ownSync);
      exits = w.exits;
      // The workers' FileHandles come back for the close, failed part or not.
      w.results.forEach((r, i) => {
        if (r && r.fh) files[job.parts[i][0]].fh = r.fh;
      });
      if (w.startError) throw w.startError;
      // The cause rather than the writers it called off.
      const errors = w.results.map((r) => r.error).filter(Boolean);
      if (errors.length) throw errors.find((e) => !e.calledOff) || errors[0];
      parts = w.results.map((r) => r.times);
      setup = Math.max(...w.results.map((r) => r.setup)); // the writers set up side by side
    }
    let sync = null;
    if (job.end !== 'none' && !ownSync) {
      const syncStart = now();
      for (const file of files) {
        const pending = syncFile(file, job.end);
        if (pending) await pending;
      }
      sync = [syncStart, now()];
    }
    const closeStart = now();
    for (const file of files) await closeFile(file);
    out = { run: runId, setup, parts, sync, close: [closeStart, now()], user: null, sys: null };
  } finally {
    for (const file of files) await closeFile(file).catch(() => {}); // after a failure: untimed
    await Promise.all(exits);
  }
  reply(out);
}

// ---- latency: each operation timed alone ----

/** As warmUp, for a latency loop (each a runner process of its own): the operation,
 *  into /dev/null, until V8 has optimized it. With only the loop's own 100 untimed
 *  operations, writeSync's positional 4 KiB O_DSYNC write on tmpfs measured 2.1 µs at
 *  the median; warm, 0.7 µs. */
async function warmUpLatency(job, data, operation) {
  const file = {};
  try {
    if (job.method === 'promises') file.fh = await fsp.open('/dev/null', O_WRONLY);
    else file.fd = fs.openSync('/dev/null', O_WRONLY);
    const started = now();
    for (let n = 0; n < WARM_CALLS && n * data.length < WARM_BYTES && now() - started < WARM_SECONDS; n++) {
      const pending = operation(file);
      if (pending) await pending;
    }
  } catch (e) {
    // The loop itself meets and reports whatever went wrong here.
  } finally {
    await closeFile(file).catch(() => {});
  }
}

async function runLatency(job, runId, paths) {
  const { method, pattern } = job;
  if (!((method === 'writeSync' && (pattern === 'overwrite0' || pattern === 'append')) ||
        (method === 'promises' && pattern === 'append'))) {
    throw new Failure(`the node runner's latency methods are writeSync (overwrite0, append) and promises (append), not ${method} (${pattern})`);
  }
  if (paths.length !== 1 || job.bytes > job.source) {
    throw new Failure(`latency needs one file and bytes <= source (${paths.length} files, bytes=${job.bytes}, source=${job.source})`);
  }
  if (job.direct) throw new Failure(NO_DIRECT);
  readSource();
  const data = Buffer.from(SOURCE.sab, 0, job.bytes);
  const file = {};
  try {
    if (method === 'promises') file.fh = await fsp.open(paths[0], O_WRONLY | job.openFlags);
    else file.fd = fs.openSync(paths[0], O_WRONLY | job.openFlags);
  } catch (e) {
    throw failure('open', e);
  }
  try {
    // One operation: the whole `bytes`, short writes completed. writeSync's returns
    // nothing, so its loop never awaits; the promise's is awaited.
    const size = data.length;
    const at0 = job.pattern === 'overwrite0';
    const operation = method === 'promises'
      ? async (file) => {
        for (let done = 0; done < size;) {
          const n = (await file.fh.write(data, done, size - done, null)).bytesWritten;
          if (n === 0) throw new Failure('write', 0, 'wrote 0 bytes');
          done += n;
        }
      }
      : (file) => {
        for (let done = 0; done < size;) {
          const n = fs.writeSync(file.fd, data, done, size - done, at0 ? done : null);
          if (n === 0) throw new Failure('write', 0, 'wrote 0 bytes');
          done += n;
        }
      };
    await warmUpLatency(job, data, operation);
    const ops = new Array(job.count).fill(0);
    const syncs = [];
    const hr = process.hrtime.bigint;
    let loopStart = now();
    // Calls are counted from the first, warm-ups included (as runner.py); an
    // operation's time holds its sync, which is also timed alone.
    for (let number = 0; number < job.warmup + job.count; number++) {
      if (number === job.warmup) loopStart = now();
      const t0 = hr();
      try {
        const pending = operation(file);
        if (pending) await pending;
      } catch (e) {
        throw failure('write', e);
      }
      const t1 = hr();
      let t2 = t1;
      if (job.every && (number + 1) % job.every === 0) {
        const pending = syncFile(file, job.everycall);
        if (pending) await pending;
        t2 = hr();
        if (number >= job.warmup) syncs.push(Number(t2 - t1));
      }
      if (number >= job.warmup) ops[number - job.warmup] = Number(t2 - t0);
    }
    const loop = [loopStart, now()];
    let sync = null;
    if (job.end !== 'none') {
      const syncStart = now();
      await syncFile(file, job.end);
      sync = [syncStart, now()];
    }
    reply({ run: runId, loop, ops, syncs, sync, user: null, sys: null });
  } finally {
    await closeFile(file).catch(() => {});
  }
}

// ---- parsing ----

const NUMBERS = new Set(['threads', 'chunk', 'iov', 'qd', 'files', 'every', 'source', 'bytes', 'count', 'warmup']);
const DIGITS = /^[0-9]+$/;

function parseHeader(words, latency) {
  const job = newJob(latency);
  for (const word of words.slice(1)) {
    const eq = word.indexOf('=');
    if (eq < 0) throw new ProtocolError('expected key=value');
    const key = word.slice(0, eq);
    const value = word.slice(eq + 1);
    if (NUMBERS.has(key)) {
      if (!DIGITS.test(value) || !Number.isSafeInteger(Number(value))) throw new ProtocolError('bad number');
      job[key] = Number(value);
    } else if (key === 'method') {
      job.method = value;
    } else if (key === 'open') {
      job.openFlags = 0;
      job.direct = false;
      if (value !== '-') {
        for (const flag of value.split(',')) {
          if (!(flag in OPEN_FLAGS)) throw new ProtocolError('bad open flags');
          job.openFlags |= OPEN_FLAGS[flag];
          if (flag === 'direct') job.direct = true; // refused at the run, with the reason
        }
      }
    } else if (key === 'end') {
      if (!['fsync', 'fdatasync', 'none'].includes(value)) throw new ProtocolError('bad end');
      job.end = value;
    } else if (key === 'everycall') {
      if (!['fsync', 'fdatasync'].includes(value)) throw new ProtocolError('bad everycall');
      job.everycall = value;
    } else if (key === 'pattern') {
      if (!['overwrite0', 'append'].includes(value)) throw new ProtocolError('bad pattern');
      job.pattern = value;
    }
    // Other keys (iov...) mean nothing to this runner.
  }
  if (job.method === null || job.source === null) throw new ProtocolError('method= and source= are required');
  if (job.threads < 1 || job.chunk < 1 || job.iov < 1 || job.files < 1) {
    throw new ProtocolError('threads, chunk, iov and files must be at least 1');
  }
  job.qd = Math.max(1, job.qd);
  allocateSource(job);
  return job;
}

async function serve() {
  let job = null;
  let runId = null;
  let paths = [];
  // Lines are taken one at a time: a `go` is finished before the next line is looked at.
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    try {
      if (!line) continue;
      const space = line.indexOf(' ');
      const command = space < 0 ? line : line.slice(0, space);
      if (command === 'file') {
        if (runId === null) throw new ProtocolError('file before run');
        paths.push(space < 0 ? '' : line.slice(space + 1)); // the rest of the line, spaces and all
        continue;
      }
      const words = line.split(/\s+/).filter(Boolean);
      if (command === 'case' || command === 'latency') {
        job = parseHeader(words, command === 'latency');
      } else if (command === 'part') {
        if (!job || job.latency || words.length !== 5 || !words.slice(1).every((w) => DIGITS.test(w))) {
          throw new ProtocolError('bad part line');
        }
        job.parts.push(words.slice(1).map(Number));
      } else if (command === 'run') {
        if (!job || words.length !== 2 || !/^-?[0-9]+$/.test(words[1])) throw new ProtocolError('bad run line');
        runId = Number(words[1]);
        paths = [];
      } else if (command === 'cpus') {
        // Accepted and ignored: Node.js cannot move a thread to a CPU.
        if (runId === null || words.length < 2 || !words.slice(1).every((w) => DIGITS.test(w))) {
          throw new ProtocolError('bad cpus line');
        }
      } else if (line === 'go') {
        if (runId === null) throw new ProtocolError('go before run');
        try {
          if (job.sourceError) throw job.sourceError;
          if (job.latency) await runLatency(job, runId, paths);
          else if (!METHODS.includes(job.method)) throw new Failure(`the node runner has no method ${job.method}`);
          else await runCase(job, runId, paths);
        } catch (e) {
          const f = e instanceof Failure ? e : failure(e && e.syscall ? e.syscall : (e && e.name) || 'node', e);
          reply({ run: runId, error: f.message, errno: f.errno });
        }
      } else if (line === 'quit') {
        return;
      } else {
        throw new ProtocolError('unknown command');
      }
    } catch (e) {
      if (e instanceof ProtocolError) throw new ProtocolError(`${e.message}: ${line.slice(0, 200)}`);
      throw e;
    }
  }
}

async function main() {
  reply({ runner: 'node', protocol: 1, version: `Node.js ${process.version}`, methods: METHODS });
  try {
    await serve();
  } catch (e) {
    if (!(e instanceof ProtocolError)) throw e;
    reply({ run: -1, error: e.message, errno: 0 });
    process.exit(2);
  }
  process.exit(0); // quit or the end of stdin, even with stdin still open
}

if (isMainThread) {
  main();
} else {
  workerMain();
}
