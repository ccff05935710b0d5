/**
 * Maps whatever a handler threw to a gRPC status through the one error catalog
 * (src/service/errors.ts, DECISIONS.md 5): a `ServiceError` keeps its code, anything else is
 * INTERNAL. The status details carry the human message; the trailing metadata key
 * `svc-error-code` carries the catalog code (it tells TIMEOUT from REQUEST_TIMEOUT, both
 * DEADLINE_EXCEEDED).
 */
import { Metadata, type StatusObject } from '@grpc/grpc-js';
import { ServiceError, toServiceError } from '../../service/errors.js';

/** Trailing metadata key holding the catalog code of an error status. */
export const ERROR_CODE_METADATA_KEY = 'svc-error-code';

/** The catalog error of a thrown value (anything that is not a ServiceError is INTERNAL_ERROR). */
export function toCatalogError(err: unknown): ServiceError {
  return err instanceof ServiceError ? err : toServiceError(err);
}

/** The status a handler answers with for a thrown value. */
export function toGrpcStatus(err: unknown): Pick<StatusObject, 'code' | 'details' | 'metadata'> {
  const e = toCatalogError(err);
  const metadata = new Metadata();
  metadata.set(ERROR_CODE_METADATA_KEY, e.code);
  return { code: e.grpcStatus, details: e.message, metadata };
}
