/**
 * Wiring: builds the store, observability, the façade and the transports from a Config,
 * loads the rules dir, starts listening, and shuts everything down in order.
 * No logic of its own lives here.
 */
import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { startAuth } from './auth/index.js';
import type { Config } from './config/index.js';
import { AuditLog, Metrics, buildReadyReport, createLogger, type Logger } from './observe/index.js';
import { BufferedLineSink } from './observe/buffered-sink.js';
import { DecisionLog, decisionIdPrefix, registerDecisionMetrics } from './observe/decision-log.js';
import type { Tracing } from './observe/tracing.js';
import { NO_METRICS, type DecisionSink } from './service/ports.js';
import { DataService } from './service/data-service.js';
import { RoleGuard } from './service/role-guard.js';
import { RuleService } from './service/rule-service.js';
import { setupTenancy } from './service/tenancy.js';
import { initSvcCodec, loadTrustedKeys, type SignaturePolicy } from './signing/index.js';
import { createStore } from './store/index.js';
import { DataStore } from './store/data-store.js';
import { ShadowStore } from './store/shadow-store.js';
import { prepareSync } from './sync/index.js';
import { redactUrl } from './sync/broker-auth.js';
import { DecisionStream } from './sync/decision-stream.js';
import { buildHttpApp } from './transport/http/app.js';
import { DEFAULT_CONSOLE_DIR } from './transport/http/console.js';
import { loadHttpsOptions } from './transport/http/https.js';
import { openDoorMessage, openDoors } from './transport/open-door.js';
import { startGrpcServer } from './transport/grpc/server.js';
import { pinTickShape } from './transport/tick-shape.js';
import { VERSION } from './version.js';

/** A started server. */
export interface RunningServer {
  readonly service: RuleService;
  readonly logger: Logger;
  /** `http://host:port` (`https://` with `--http-tls-cert`), when HTTP is on. */
  readonly httpUrl: string | null;
  /** Stops accepting, waits for in-flight work, writes `server_stopped`, closes files. */
  close(): Promise<void>;
  /** Re-reads the API keys and JWKS files now (SIGHUP); a no-op with authentication off. */
  reloadCredentials(): void;
  /**
   * For the shutdown timeout: writes `server_stopped` with `forced: true` (unless `close`
   * already wrote it) and closes the audit file so the line reaches it, without waiting for
   * the work still in flight. The process is expected to exit right after.
   */
  abort(): Promise<void>;
}

/** Starts a server from a parsed config. Rejects (after logging) when it cannot start. */
export async function startServer(config: Config, logger: Logger = createLogger({ level: config.logLevel })): Promise<RunningServer> {
  const startedAt = Date.now();
  // NOTE (speed, bench/NOTES.md "Eighth session"): see ./transport/tick-shape.ts.
  pinTickShape();
  await initSvcCodec();
  const signature: SignaturePolicy = {
    enabled: config.signatureEnabled,
    require: config.signatureRequire,
    trustedKeys: config.signatureEnabled ? loadTrustedKeys({ list: config.signatureTrustedKeys, file: config.signatureTrustedKeysFile }) : [],
    allowUnsignedLocal: config.signatureAllowUnsignedLocal,
  };

  // NOTE: a reader may share its writer's dir; only an instance that writes removes temp files.
  const store = createStore({ rulesDir: config.rulesDir, maxVersions: config.maxVersions, logger, sweepTempFiles: config.role !== 'reader' });
  const metrics = config.metricsEnabled ? new Metrics({ version: VERSION, rulesCount: () => store.count(), tenantLabel: config.multiTenancyEnabled }) : null;
  // Audit lines reach stdout in one write per event-loop turn (audit throughput); flushed by audit.close()
  // and, should the process end without a shutdown, at exit.
  const auditOut = new BufferedLineSink(process.stdout);
  const flushAudit = (): void => auditOut.flush();
  process.on('exit', flushAudit);
  const audit = new AuditLog({ dir: config.auditDir ?? undefined, logger, sampleRate: config.auditSampleRate, stdout: auditOut });
  // Observability (docs/observability.md): trace export only with --otlp-endpoint (the SDK is not even
  // loaded otherwise); per-request log lines only at --log-level debug.
  const tracing = config.otlpEndpoint === null ? null : await startTracing(config, logger);
  // Decision records (EXTENSIONS.md 4, docs/changing-rules.md): only with --decision-log; written off the execution path.
  const decisionLog = config.decisionLog === null ? null : new DecisionLog({ dir: config.decisionLog, logger });
  // With --decision-log-stream the records also go to JetStream over the sync connection (attached by prepareSync).
  const decisionStream =
    decisionLog !== null && config.decisionLogStream ? new DecisionStream({ logger, countDrop: (reason, n) => decisionLog.count(reason, n) }) : null;
  if (decisionLog !== null) {
    if (metrics) registerDecisionMetrics(metrics.registry, decisionLog, decisionStream ?? undefined);
    logger.info({ dir: config.decisionLog, sample_rate: config.decisionLogSampleRate, stream: decisionStream !== null }, 'decision log on');
  }
  const decisionSink: DecisionSink | null =
    decisionStream === null || decisionLog === null
      ? decisionLog
      : {
          push: (e) => {
            decisionLog.push(e);
            decisionStream.push(e);
          },
        };
  const requestLog = config.logLevel === 'debug' ? logger : undefined;
  const observe = { ...(tracing ? { tracing } : {}), ...(requestLog ? { requestLog } : {}) };
  // Multi-tenancy (docs/tenancy.md): the tenant registry from <rules-dir>/tenants.json; null when off.
  const tenancy = config.multiTenancyEnabled ? await setupTenancy({ config, store, audit, logger, clock: () => performance.now() }) : null;
  // Reference data (EXTENSIONS.md 3, docs/expressions.md): <rules-dir>/data/<name>.json, read back here.
  // NOTE: the data and shadow stores record their own file changes in the rule store's one record
  // (its `files.own`), where the watcher's tokens come from (docs/decisions.md "Echo on the watcher").
  const own = store.files?.own;
  const dataStore = new DataStore({ rulesDir: config.rulesDir, ...(own ? { own } : {}), maxBytes: config.maxDataBytes, logger });
  const dataReport = await dataStore.load();
  for (const skipped of dataReport.skipped) logger.warn({ path: skipped.path, reason: skipped.reason }, 'skipped a data file');
  const data = new DataService({
    store: dataStore,
    guard: new RoleGuard(config.role, config.writerAddr),
    audit,
    maxDataBytes: config.maxDataBytes,
    tenancy: tenancy?.registry ?? null,
    logger,
  });
  // Shadow runs (EXTENSIONS.md 4): <rules-dir>/shadows/<name>.json, installed once the rules are loaded.
  const shadowStore = new ShadowStore({ rulesDir: config.rulesDir, ...(own ? { own } : {}), logger });
  const service = new RuleService(
    {
      version: VERSION,
      role: config.role,
      writerAddr: config.writerAddr,
      executionTimeoutMs: config.executionTimeoutMs,
      maxSteps: config.maxSteps,
      budget: { maxEvalOps: config.maxEvalOps, maxValueBytes: config.maxValueBytes },
      requestTimeoutMs: config.requestTimeoutSecs * 1000,
      maxBatchSize: config.maxBatchSize,
      signature,
    },
    {
      store,
      metrics: metrics ?? NO_METRICS,
      audit,
      sampler: audit.sampler,
      logger,
      clock: () => performance.now(),
      now: Date.now,
      ...(tracing ? { tracer: tracing } : {}),
      ...(tenancy ? { tenancy: tenancy.registry, tenantSync: tenancy.sync } : {}),
      data: (tenant) => data.snapshot(tenant),
      // Datasets are synchronized like rules (docs/data-sync.md): in the snapshot and the change stream.
      dataSync: data,
      shadowStore,
      ...(decisionSink ? { decisions: { sink: decisionSink, sampleRate: config.decisionLogSampleRate, idPrefix: decisionIdPrefix(), now: Date.now } } : {}),
    },
  );

  const report = await store.load(service.prepareFile);
  for (const skipped of report.skipped) logger.warn({ path: skipped.path, reason: skipped.reason }, 'skipped a rule file');
  logger.info({ loaded: report.loaded, skipped: report.skipped.length, rules_dir: config.rulesDir }, 'rules loaded');
  tenancy?.reportUnregistered();
  const shadowReport = await shadowStore.load();
  for (const skipped of shadowReport.skipped) logger.warn({ path: skipped.path, reason: skipped.reason }, 'skipped a shadow file');
  if (shadowReport.loaded.length > 0) logger.info({ shadows: service.loadShadows(shadowReport.loaded) }, 'shadow runs loaded');

  // Rule synchronization (docs/operations.md): file watcher and broker. Prepared before the listeners, so
  // `/health` has its `sync` block from the first answer; started once the listeners are up.
  const sync = prepareSync({
    config,
    target: service,
    logger,
    ...(tenancy ? { hooks: tenancy.hooks } : {}),
    ...(decisionStream ? { decisionStream } : {}),
  });

  // Authentication (docs/securing.md): off unless a keys file or a JWKS file is configured; a
  // failed attempt is the audit event `auth_failed` (at most one per address per second).
  const auth = startAuth(config, { logger, onFailure: (failure) => audit.write('auth_failed', { ...failure }) });
  const httpAuth = auth ? { guard: auth.guard, publicMetrics: auth.publicMetrics } : undefined;

  const closers: Array<() => Promise<void>> = [];
  if (auth) closers.push(async () => auth.close());
  let httpUrl: string | null = null;
  if (!config.disableHttp) {
    // HTTPS (docs/securing.md): the PEM files are checked before anything listens.
    const https =
      config.httpTlsCert !== null && config.httpTlsKey !== null ? loadHttpsOptions(config.httpTlsCert, config.httpTlsKey, config.tlsClientCa) : null;
    const app = buildHttpApp(service, {
      bodyLimit: config.maxRequestBodyBytes,
      maxResponseBytes: config.maxResponseBytes,
      requestTimeoutMs: config.requestTimeoutSecs * 1000,
      debugMode: config.debugMode,
      debugRuleset: (ctx, name) => service.debugRuleset(ctx, name),
      ...observe,
      multiTenancy: config.multiTenancyEnabled,
      ...(tenancy ? { tenants: tenancy.manager } : {}),
      data,
      metrics: metrics ? async () => ({ contentType: metrics.contentType, body: await metrics.render() }) : undefined,
      logger,
      ...(httpAuth ? { auth: httpAuth } : {}),
      ...(https ? { https } : {}),
      ...(config.disableConsole ? {} : { consoleDir: DEFAULT_CONSOLE_DIR }),
      httpFastPath: !config.disableHttpFastPath,
    });
    await app.listen({ host: config.httpAddr.host, port: config.httpAddr.port });
    const addr = app.server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    httpUrl = `${https ? 'https' : 'http'}://${host}:${addr.port}`;
    logger.info({ url: httpUrl, ...(https ? { mtls: https.requestCert } : {}) }, 'http listening');
    closers.push(() => app.close());
  }
  let grpcAddress: string | null = null;
  let socketPath: string | null = null;
  if (!config.disableGrpc || config.udsPath !== null) {
    // gRPC on --grpc-addr and/or --uds-path (docs/grpc.md); a failed start closes what already listens.
    try {
      const grpc = await startGrpcServer(service, config, logger, observe, auth ? { guard: auth.guard } : {}, {
        data,
        ...(tenancy ? { tenants: tenancy.manager } : {}),
        ...(config.debugMode ? { debugRuleset: (ctx, name) => service.debugRuleset(ctx, name) } : {}),
      });
      grpcAddress = grpc.address;
      socketPath = grpc.socketPath;
      closers.push(() => grpc.close());
    } catch (err) {
      await Promise.allSettled(closers.map((c) => c()));
      throw err;
    }
  }

  // EXTENSIONS.md 1 "Warning": one line when a listener off loopback takes calls without credentials;
  // under svc-cluster only the first worker says it (the others share its port).
  const doors = openDoors(config);
  const firstWorker = !cluster.isWorker || cluster.worker?.id === 1;
  if (doors.length > 0 && firstWorker) logger.warn({ addresses: doors.map((d) => d.address) }, openDoorMessage(doors));

  await sync.start();
  closers.push(() => sync.close());

  // The `ready` line (docs/configuration.md "Log format"): what a person needs to know, in one record;
  // `--log-format pretty` draws it as the start-up banner.
  const ready = buildReadyReport(config, {
    version: VERSION,
    readyMs: Math.round(performance.now()),
    httpUrl,
    grpcAddress,
    socketPath,
    rulesets: store.count(),
    tenants: tenancy ? tenancy.registry.list().length : null,
    shownSyncUrl: config.syncUrl === null ? null : redactUrl(config.syncUrl),
    // Under svc-cluster only the worker that logged the warning repeats it.
    openDoor: doors.length > 0 && firstWorker ? openDoorMessage(doors) : null,
  });
  logger.info({ ...ready }, 'ready');

  audit.write('server_started', { version: VERSION, rules_count: store.count() });

  let closing: Promise<void> | undefined;
  let stopped = false;
  const writeStopped = (fields: Record<string, unknown>): void => {
    if (stopped) return;
    stopped = true;
    audit.write('server_stopped', { uptime_seconds: Math.floor((Date.now() - startedAt) / 1000), ...fields });
  };
  return {
    service,
    logger,
    httpUrl,
    reloadCredentials() {
      if (auth) auth.reload();
      else logger.info({}, 'reload requested; authentication is off, nothing to reload');
    },
    close() {
      closing ??= (async () => {
        await Promise.allSettled(closers.map((c) => c()));
        // Spans of the requests just finished are exported before exit.
        await tracing?.shutdown().catch((err: unknown) => logger.warn({ err: (err as Error)?.message }, 'trace export flush failed'));
        await decisionLog?.close();
        writeStopped({});
        await audit.close();
        process.off('exit', flushAudit);
      })();
      return closing;
    },
    async abort() {
      writeStopped({ forced: true });
      await audit.close();
    },
  };
}

/** Starts trace export to `--otlp-endpoint` (docs/observability.md); the OpenTelemetry SDK loads here. */
async function startTracing(config: Config, logger: Logger): Promise<Tracing> {
  const { Tracing } = await import('./observe/tracing.js');
  const tracing = new Tracing({
    endpoint: config.otlpEndpoint as string,
    serviceName: config.serviceName,
    serviceVersion: VERSION,
    instanceId: config.instanceId,
    logger,
  });
  logger.info({ url: tracing.url, service_name: config.serviceName }, 'trace export on');
  return tracing;
}
