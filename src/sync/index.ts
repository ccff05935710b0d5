/**
 * Rule synchronization (SPEC.md 7-8, architecture guide point 7): starts the adapters a
 * configuration asks for and reports their state in the `sync` block of `/health`.
 *
 * - `--watch-rules` (with `--rules-dir`): the rules-dir watcher, on any role.
 * - `--sync-url` on a writer: the publisher; on a reader: the durable consumer. A standalone
 *   instance does not synchronize (SPEC.md 7), so it ignores `--sync-url` with a warning.
 *   Where the NATS client is not installed, `--sync-url` logs that broker sync is unavailable
 *   and has no effect.
 *
 * A reader with its own rules dir (no watcher) writes what it receives to that dir, so it
 * restarts with it; with the watcher on, the dir belongs to the writer and nothing is written.
 *
 * Broker credentials and TLS (`--sync-token`, `--sync-user`/`--sync-password`,
 * `--sync-creds-file`, `--sync-tls-ca`; broker-auth.ts) are read by `prepareSync`, so an
 * unreadable file stops the start; `/health` and the log show `--sync-url` without credentials.
 */
import type { Config } from '../config/index.js';
import { readBrokerAuth, redactUrl, type BrokerAuth } from './broker-auth.js';
import { BrokerConsumer } from './broker-consumer.js';
import { BrokerLink } from './broker-link.js';
import type { DecisionStream } from './decision-stream.js';
import { BrokerPublisher } from './broker-publisher.js';
import { realClock, type SyncClock } from './clock.js';
import { DEFAULT_NATS_MODULES, loadNatsApi, type NatsModuleNames } from './nats-api.js';
import type { SyncTarget } from './sync-types.js';
import { RuleWatcher, type CreateFsWatcher } from './watcher.js';
import type { Logger } from '../log.js';

export type { SyncTarget } from './sync-types.js';

/** The configuration fields sync reads. */
export type SyncConfig = Pick<
  Config,
  | 'role'
  | 'rulesDir'
  | 'watchRules'
  | 'watchPoll'
  | 'watchPollIntervalMs'
  | 'syncUrl'
  | 'syncSubjectPrefix'
  | 'instanceId'
  | 'republishIntervalSecs'
  | 'multiTenancyEnabled'
  | 'syncToken'
  | 'syncUser'
  | 'syncPassword'
  | 'syncCredsFile'
  | 'syncTlsCa'
> &
  // `--max-data-bytes`: the writer warns when the broker's max_payload is smaller (docs/data-sync.md).
  Partial<Pick<Config, 'maxDataBytes'>>;

/**
 * Hooks for the tenant registry (multi-tenancy is wired by its own module). Tenant changes over
 * the broker go through the façade like rules (`SyncTarget.applyChange`, `snapshot`).
 */
export interface SyncHooks {
  /** `tenants.json` changed in the rules dir (watcher, multi-tenancy mode). */
  readonly onTenantsFileChanged?: () => void | Promise<void>;
}

/** Options of `startSync`. */
export interface StartSyncOptions {
  readonly config: SyncConfig;
  readonly target: SyncTarget;
  readonly logger: Logger;
  readonly clock?: SyncClock;
  /** Module names of the NATS client (tests point them at a module that does not exist). */
  readonly natsModules?: NatsModuleNames;
  readonly hooks?: SyncHooks;
  readonly createFsWatcher?: CreateFsWatcher;
  /** Rule files changed after this time are re-checked when the watcher is ready. Default: process start. */
  readonly recheckSince?: number;
  /** Decision records to JetStream (`--decision-log-stream`, ./decision-stream.ts): attached to the broker connection. */
  readonly decisionStream?: DecisionStream;
}

/** Running sync adapters. */
export interface RunningSync {
  /** The `sync` block of `/health`, or null when nothing synchronizes. */
  status(): Record<string, unknown> | null;
  /** Stops the adapters (before the audit log closes). */
  close(): Promise<void>;
}

/** Sync adapters built but not started (`prepareSync`). */
export interface PreparedSync extends RunningSync {
  /** Starts them; resolves once the watcher's initial scan is done. Call once. */
  start(): Promise<void>;
}

/** Starts what the configuration asks for (see the module comment). Never rejects for broker trouble. */
export async function startSync(options: StartSyncOptions): Promise<RunningSync> {
  const sync = prepareSync(options);
  await sync.start();
  return sync;
}

/**
 * Builds the adapters the configuration asks for without starting anything, and installs the
 * `sync` block of `/health` at once: a server prepares sync before it listens, so `/health`
 * shows the sync state (watcher not ready yet, broker not connected yet) from its first answer,
 * and starts sync once the listeners are up.
 */
export function prepareSync(options: StartSyncOptions): PreparedSync {
  const { config, target, logger } = options;
  const clock = options.clock ?? realClock;
  const closers: Array<() => Promise<void>> = [];
  let link: BrokerLink | undefined;
  let publisher: BrokerPublisher | undefined;
  let consumer: BrokerConsumer | undefined;
  let broker: Record<string, unknown> | null = null;
  // Until start() knows whether the NATS client loads, a configured broker shows as not connected.
  let brokerPending = config.syncUrl !== null && config.role !== 'standalone';
  if (config.syncUrl && config.role === 'standalone') broker = { enabled: false, reason: 'standalone instances do not synchronize' };
  // Read now: an unreadable creds or CA file stops the start (ConfigError naming the flag and the file).
  const auth: BrokerAuth | undefined = brokerPending ? readBrokerAuth(config) : undefined;
  const shownUrl = config.syncUrl === null ? null : redactUrl(config.syncUrl);

  const watcher =
    config.watchRules && config.rulesDir && target.files
      ? new RuleWatcher({
          rulesDir: config.rulesDir,
          target,
          logger,
          clock,
          poll: config.watchPoll,
          pollIntervalMs: config.watchPollIntervalMs,
          watchTenantsFile: config.multiTenancyEnabled,
          maxDataBytes: config.maxDataBytes,
          recheckSince: options.recheckSince ?? Math.floor(performance.timeOrigin),
          ...(options.hooks?.onTenantsFileChanged ? { onTenantsFileChanged: options.hooks.onTenantsFileChanged } : {}),
          ...(options.createFsWatcher ? { createFsWatcher: options.createFsWatcher } : {}),
        })
      : undefined;

  const active = watcher !== undefined || config.syncUrl !== null;
  const status = (): Record<string, unknown> | null => {
    if (!active) return null;
    const w = watcher?.status() ?? null;
    const pub = publisher?.status() ?? null;
    const con = consumer?.status() ?? null;
    const brokerEventAt = pub?.last_published_at ?? con?.last_event_at ?? null;
    const lastEventAt =
      [brokerEventAt, w?.last_reload_at ?? null]
        .filter((t): t is string => t !== null)
        .sort()
        .at(-1) ?? null;
    const hasBroker = link !== undefined || brokerPending;
    return {
      role: config.role,
      mode: hasBroker && watcher ? 'broker+watcher' : hasBroker ? 'broker' : watcher ? 'watcher' : 'none',
      instance_id: config.instanceId,
      connected: link ? link.connected : brokerPending ? false : null,
      last_event_at: lastEventAt,
      broker: link
        ? {
            enabled: true,
            url: shownUrl,
            subject_prefix: config.syncSubjectPrefix,
            connected: link.connected,
            last_error: link.lastError,
            ...(pub ?? {}),
            ...(con ?? {}),
          }
        : brokerPending
          ? { enabled: true, url: shownUrl, subject_prefix: config.syncSubjectPrefix, connected: false, last_error: null }
          : broker,
      watcher: w,
    };
  };
  if (active) target.setSyncStatus(() => status() ?? {});

  const start = async (): Promise<void> => {
    if (watcher) {
      await watcher.start();
      closers.push(() => watcher.close());
    }
    if (!config.syncUrl) return;
    if (config.role === 'standalone') {
      logger.warn({ sync_url: shownUrl }, '--sync-url has no effect on a standalone instance (use --role writer or reader)');
      return;
    }
    const loaded = await loadNatsApi(options.natsModules ?? DEFAULT_NATS_MODULES);
    if (!loaded.ok) {
      logger.warn(
        { sync_url: shownUrl, reason: loaded.reason },
        'broker sync unavailable: the NATS client (@nats-io/transport-node, @nats-io/jetstream) is not installed; --sync-url has no effect',
      );
      broker = { enabled: false, reason: 'NATS client not installed' };
      brokerPending = false;
      return;
    }
    link = new BrokerLink({
      api: loaded.api,
      url: config.syncUrl,
      name: config.instanceId,
      prefix: config.syncSubjectPrefix,
      clock,
      logger,
      ...(auth ? { auth } : {}),
    });
    brokerPending = false;
    const common = { link, target, instanceId: config.instanceId, prefix: config.syncSubjectPrefix, clock, logger };
    if (config.role === 'writer') {
      publisher = new BrokerPublisher({
        ...common,
        republishIntervalMs: config.republishIntervalSecs * 1000,
        ...(config.maxDataBytes !== undefined ? { maxDataBytes: config.maxDataBytes } : {}),
      });
      publisher.start();
    } else {
      // A reader with its own rules dir (no watcher on a shared dir) keeps what it receives on disk.
      consumer = new BrokerConsumer({ ...common, persist: target.persistent && !config.watchRules });
      consumer.start();
    }
    const d = options.decisionStream;
    d?.attach(link);
    link.start();
    const l = link;
    const p = publisher;
    const c = consumer;
    // Order: stop producing/consuming, then drop the connection.
    closers.unshift(async () => {
      await Promise.allSettled([p?.close(), c?.close(), d?.close()]);
      await l.close();
    });
  };

  let closing: Promise<void> | undefined;
  return {
    status,
    start,
    close() {
      closing ??= (async () => {
        for (const close of closers) {
          await close().catch((err: unknown) => logger.warn({ err: (err as Error)?.message ?? String(err) }, 'sync close failed'));
        }
      })();
      return closing;
    },
  };
}
