/**
 * A line sink that batches writes: lines written during one turn of the event loop reach the
 * target in one `write` call (at `setImmediate`), so a loaded server makes one stdout system
 * call per loop turn instead of one per audit line. Lines stay complete and in order; `flush()`
 * writes what is pending synchronously (shutdown, process exit).
 *
 * NOTE: one write never exceeds `maxBytes` (default 4096, PIPE_BUF on Linux) unless a single
 * line does: writes up to PIPE_BUF to a pipe are atomic, so the lines of several processes
 * sharing one stdout pipe (svc-cluster workers) never interleave inside a line.
 */
import type { LineSink } from './audit.js';

/** Options of `BufferedLineSink`. */
export interface BufferedLineSinkOptions {
  /** Largest write in UTF-16 code units (lines are never split). Default 4096 (PIPE_BUF). */
  readonly maxBytes?: number;
  /** Schedules the deferred flush; default `setImmediate` (after this turn's I/O callbacks). */
  readonly schedule?: (fn: () => void) => void;
}

/** Batches lines for `target`; call `flush()` before exit (`AuditLog.close` does). */
export class BufferedLineSink implements LineSink {
  private pending: string[] = [];
  private size = 0;
  private scheduled = false;
  private readonly maxBytes: number;
  private readonly schedule: (fn: () => void) => void;
  private readonly deferred = (): void => {
    this.scheduled = false;
    this.flush();
  };

  constructor(
    private readonly target: LineSink,
    options: BufferedLineSinkOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? 4096;
    this.schedule = options.schedule ?? ((fn) => void setImmediate(fn));
  }

  /** Queues `chunk` (one or more complete lines). */
  write(chunk: string): void {
    // NOTE: counted in code units; a line of non-ASCII text may take more bytes, which only
    // makes the write bigger than PIPE_BUF for such lines.
    if (this.size > 0 && this.size + chunk.length > this.maxBytes) this.flush();
    this.pending.push(chunk);
    this.size += chunk.length;
    if (this.size >= this.maxBytes) {
      this.flush();
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(this.deferred);
    }
  }

  /** Writes everything pending now, in order, in one call. Never throws. */
  flush(): void {
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = [];
    this.size = 0;
    try {
      this.target.write(text);
    } catch {
      // NOTE: stdout is best effort (AuditLog.write never throws either).
    }
  }
}
