/**
 * The slice of the NATS client (`@nats-io/transport-node` and `@nats-io/jetstream` 3.x) that
 * broker sync uses, as structural types, and the on-demand loader.
 *
 * The client is loaded on demand (SPEC.md 8: "Broker sync requires a build with the
 * `broker-sync` feature"): nothing imports it statically, so the server builds and runs where
 * it is not installed (a trimmed deployment); `loadNatsApi` imports it with `import()` only
 * when `--sync-url` is set, and reports the reason when it is missing. Keeping our own types
 * also keeps the type check independent of whether the package is installed.
 */

/** Module specifiers of the client; injectable so tests can point at a module that does not exist. */
export interface NatsModuleNames {
  readonly transport: string;
  readonly jetstream: string;
}

/** The published package names. */
export const DEFAULT_NATS_MODULES: NatsModuleNames = Object.freeze({
  transport: '@nats-io/transport-node',
  jetstream: '@nats-io/jetstream',
});

/** A connection status change (`nc.status()`). */
export interface NatsStatus {
  readonly type: string;
}

/** A NATS connection. */
export interface NatsConnectionLike {
  /** What the server said when connecting (`max_payload`: the largest message it accepts, bytes). */
  readonly info?: { readonly max_payload?: number };
  status(): AsyncIterable<NatsStatus>;
  close(): Promise<void>;
  closed(): Promise<void | Error>;
  isClosed(): boolean;
}

/** A JetStream message as delivered to a consumer. */
export interface JsMsgLike {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly info: {
    readonly streamSequence: number;
    readonly pending: number;
    readonly redelivered: boolean;
    /** Time the stream stored the message (ns since the epoch). */
    readonly timestampNanos: number;
  };
  ack(): void;
  nak(millis?: number): void;
  term(reason?: string): void;
}

/** Messages of `consume()`. */
export interface ConsumerMessagesLike extends AsyncIterable<JsMsgLike> {
  close(): Promise<void | Error>;
}

/** Consumer info (the fields used). */
export interface ConsumerInfoLike {
  readonly name: string;
  readonly num_pending: number;
  readonly config: Record<string, unknown>;
}

/** A pull consumer. */
export interface ConsumerLike {
  info(cached?: boolean): Promise<ConsumerInfoLike>;
  consume(opts?: Record<string, unknown>): Promise<ConsumerMessagesLike>;
  delete(): Promise<boolean>;
}

/** Stream info (the fields used). */
export interface StreamInfoLike {
  readonly config: { readonly name: string; readonly subjects?: string[]; readonly max_age?: number } & Record<string, unknown>;
  readonly state: { readonly messages: number; readonly last_seq: number; readonly first_seq: number };
}

/** The JetStream client. */
export interface JetStreamLike {
  publish(subject: string, data: Uint8Array, opts: { msgID: string; timeout: number }): Promise<{ seq: number; duplicate: boolean }>;
  readonly consumers: {
    /** A durable consumer by name, or an ordered consumer from options. */
    get(stream: string, nameOrOptions: string | Record<string, unknown>): Promise<ConsumerLike>;
  };
}

/** The JetStream manager. */
export interface JetStreamManagerLike {
  readonly streams: {
    info(name: string): Promise<StreamInfoLike>;
    add(config: Record<string, unknown>): Promise<StreamInfoLike>;
    update(name: string, config: Record<string, unknown>): Promise<StreamInfoLike>;
  };
  readonly consumers: {
    info(stream: string, name: string): Promise<ConsumerInfoLike>;
    add(stream: string, config: Record<string, unknown>): Promise<ConsumerInfoLike>;
    delete(stream: string, name: string): Promise<boolean>;
  };
}

/** The client entry points broker sync needs. */
export interface NatsApi {
  connect(options: Record<string, unknown>): Promise<NatsConnectionLike>;
  jetstream(nc: NatsConnectionLike, options?: Record<string, unknown>): JetStreamLike;
  jetstreamManager(nc: NatsConnectionLike, options?: Record<string, unknown>): Promise<JetStreamManagerLike>;
  /** Builds the authenticator of a NATS credentials file (user JWT and NKey seed); `--sync-creds-file`. */
  credsAuthenticator?(creds: Uint8Array): unknown;
}

/** Result of `loadNatsApi`. */
export type NatsLoadResult = { readonly ok: true; readonly api: NatsApi } | { readonly ok: false; readonly reason: string };

/** Imports the NATS client on demand; never throws. */
export async function loadNatsApi(names: NatsModuleNames = DEFAULT_NATS_MODULES): Promise<NatsLoadResult> {
  try {
    const transport = (await import(names.transport)) as Record<string, unknown>;
    const js = (await import(names.jetstream)) as Record<string, unknown>;
    const { connect, credsAuthenticator } = transport;
    const { jetstream, jetstreamManager } = js;
    if (typeof connect !== 'function' || typeof jetstream !== 'function' || typeof jetstreamManager !== 'function') {
      return { ok: false, reason: `${names.transport} / ${names.jetstream} do not export connect, jetstream and jetstreamManager` };
    }
    const creds = typeof credsAuthenticator === 'function' ? { credsAuthenticator } : {};
    return { ok: true, api: { connect, jetstream, jetstreamManager, ...creds } as unknown as NatsApi };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}
