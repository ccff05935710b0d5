/**
 * The role guard: a reader rejects every write with 409 READ_ONLY (DECISIONS.md 3).
 */
import { ServiceError } from './errors.js';

/** The `error` of a write refused by a reader. */
export const READ_ONLY_TEXT = 'this instance is a reader and does not accept writes';

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
    // NOTE: `error` is the human text, as in every catalog body (it used to be `read_only`,
    // with the text in `message`).
    throw new ServiceError('READ_ONLY', READ_ONLY_TEXT, {
      writer: this.writerAddr,
      hint: 'send writes to the writer',
    });
  }
}
