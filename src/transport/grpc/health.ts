/**
 * The standard gRPC health service `grpc.health.v1.Health` (proto/grpc/health/v1/health.proto,
 * EXTENSIONS.md 5 "gRPC"), so that load balancers, Kubernetes `grpc` probes and
 * `grpc-health-probe` can ask the server directly.
 *
 * The serving status is the server's readiness, the same check as HTTP `/health` and gRPC
 * `rules.RuleService/Health` (`RuleServiceApi.ready`): SERVING when it passes, NOT_SERVING when
 * it fails or once the server drains for shutdown. It is known for the service names `""` (the
 * server as a whole) and `rules.RuleService`; Check answers NOT_FOUND for any other name, Watch
 * SERVICE_UNKNOWN (as the protocol asks). Open to every caller, like `/health` (EXTENSIONS.md 1).
 *
 * Watch sends the status at once, then each change: while at least one Watch is open the
 * readiness check runs every `watchIntervalMs` (no timer runs without watchers). On drain every
 * Watch gets NOT_SERVING and is ended, so that open watches do not hold the shutdown.
 */
import type { sendUnaryData, ServerUnaryCall, ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import { ServiceError } from '../../service/errors.js';
import { MalformedMessage, SERVICE_NAME } from './proto.js';
import { toGrpcStatus } from './status.js';

/** `HealthCheckResponse.ServingStatus` (enums as strings, ./proto.ts). */
export type ServingStatus = 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

/** The service names the health service knows. */
export const HEALTH_SERVICES: readonly string[] = ['', SERVICE_NAME];

/** Default period of the readiness check while a Watch is open. */
export const DEFAULT_WATCH_INTERVAL_MS = 1000;

interface HealthCheckRequestMsg {
  service: string;
}

/** One open Watch: its stream and the status last sent on it. */
interface Watcher {
  readonly call: ServerWritableStream<unknown, unknown>;
  /** False for a service name the server does not know (it stays SERVICE_UNKNOWN). */
  readonly known: boolean;
  last: ServingStatus;
}

/** The health service of one gRPC server. */
export class HealthService {
  private draining = false;
  private readonly watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    /** Resolves when the server is ready; rejects (NOT_READY) otherwise. */
    private readonly ready: () => Promise<unknown>,
    private readonly watchIntervalMs = DEFAULT_WATCH_INTERVAL_MS,
  ) {}

  /** The serving status now: NOT_SERVING while draining or when the readiness check fails. */
  async status(): Promise<'SERVING' | 'NOT_SERVING'> {
    if (this.draining) return 'NOT_SERVING';
    try {
      await this.ready();
    } catch {
      return 'NOT_SERVING';
    }
    return this.draining ? 'NOT_SERVING' : 'SERVING';
  }

  /** The implementation to add under `grpc.health.v1.Health`. */
  implementation(): UntypedServiceImplementation {
    return {
      Check: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>): void => {
        const request = call.request;
        if (request instanceof MalformedMessage) {
          callback(toGrpcStatus(new ServiceError('BAD_REQUEST', `malformed request message: ${request.reason}`)));
          return;
        }
        const name = (request as HealthCheckRequestMsg).service;
        if (!HEALTH_SERVICES.includes(name)) {
          callback(toGrpcStatus(new ServiceError('NOT_FOUND', `unknown service '${name}'; known: "" and ${SERVICE_NAME}`)));
          return;
        }
        this.status().then((status) => callback(null, { status }));
      },
      Watch: (call: ServerWritableStream<unknown, unknown>): void => {
        const request = call.request;
        if (request instanceof MalformedMessage) {
          call.destroy(Object.assign(new Error(request.reason), toGrpcStatus(new ServiceError('BAD_REQUEST', `malformed request message: ${request.reason}`))));
          return;
        }
        const known = HEALTH_SERVICES.includes((request as HealthCheckRequestMsg).service);
        const watcher: Watcher = { call, known, last: 'SERVICE_UNKNOWN' };
        call.on('cancelled', () => this.forget(watcher));
        call.on('close', () => this.forget(watcher));
        if (this.draining) {
          call.write({ status: 'NOT_SERVING' });
          call.end();
          return;
        }
        this.watchers.add(watcher);
        if (!known) {
          // The protocol: an unknown service is SERVICE_UNKNOWN, and the call stays open (it may appear later).
          call.write({ status: 'SERVICE_UNKNOWN' });
          return;
        }
        this.status().then((status) => {
          if (!this.watchers.has(watcher)) return;
          watcher.last = status;
          call.write({ status });
          this.arm();
        });
      },
    };
  }

  /** Shutdown begins: every status is NOT_SERVING from now on; open Watches get it and end. */
  drain(): void {
    if (this.draining) return;
    this.draining = true;
    this.disarm();
    for (const w of this.watchers) {
      if (w.last !== 'NOT_SERVING') w.call.write({ status: 'NOT_SERVING' });
      w.call.end();
    }
    this.watchers.clear();
  }

  private forget(watcher: Watcher): void {
    this.watchers.delete(watcher);
    if (this.watchers.size === 0) this.disarm();
  }

  /** Starts the periodic check (once) while a known-service Watch is open. */
  private arm(): void {
    if (this.timer !== undefined || this.draining) return;
    this.timer = setInterval(() => this.poll(), this.watchIntervalMs);
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One check for every watcher; a change is sent to the watchers of a known service. */
  private poll(): void {
    // NOTE: the readiness check can take up to its lock timeout; checks never overlap.
    if (this.polling) return;
    this.polling = true;
    this.status().then((status) => {
      this.polling = false;
      for (const w of this.watchers) {
        if (!w.known || w.last === status) continue;
        w.last = status;
        w.call.write({ status });
      }
    });
  }
}
