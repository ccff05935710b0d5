/**
 * The role guard: a reader rejects every write with 409 READ_ONLY (DECISIONS.md 3).
 */
import { ServiceError } from './errors.js';

/** Instance role, fixed at start (`--role`). */
export type Role = 'standalone' | 'writer' | 'reader';

/** Rejects writes on a reader. */
export class RoleGuard {
  constructor(
    readonly role: Role,
    readonly writerAddr: string | null,
  ) {}

  /** Throws READ_ONLY on a reader. */
  assertWritable(): void {
    if (this.role !== 'reader') return;
    throw new ServiceError('READ_ONLY', 'read_only', {
      message: 'this instance is a reader and does not accept writes',
      writer: this.writerAddr,
      hint: 'send writes to the writer',
    });
  }
}
