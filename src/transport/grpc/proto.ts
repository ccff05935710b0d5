/**
 * Loads `proto/rules.proto` at run time with @grpc/proto-loader (no code generation). The
 * path is resolved from this file to the package root, so it works from both `src/` (tsx) and
 * `dist/` (built): both sit three directories below the root.
 */
import { resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Absolute path of `proto/rules.proto`. */
export const PROTO_PATH = resolve(import.meta.dirname, '..', '..', '..', 'proto', 'rules.proto');

/** The directory of the proto files (`rules.proto`, `grpc/health/v1/health.proto`). */
export const PROTO_DIR = resolve(import.meta.dirname, '..', '..', '..', 'proto');

/** Path of the standard health checking proto, relative to `PROTO_DIR`. */
export const HEALTH_PROTO_FILE = 'grpc/health/v1/health.proto';

/** Fully qualified name of the service in the proto. */
export const SERVICE_NAME = 'rules.RuleService';

/** Fully qualified name of the standard health service (./health.ts). */
export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health';

/**
 * proto-loader options used by the server, the tests and the bench: field names as written in
 * the proto (`input_json`), 64-bit integers as decimal strings, absent fields as their
 * defaults, and a virtual field naming the set member of each `oneof`.
 */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = Object.freeze({
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});

/** The package definition of `proto/rules.proto` (parsed once per process). */
let cached: protoLoader.PackageDefinition | undefined;

/** Loads (once) and returns the package definition. */
export function loadRulesPackage(): protoLoader.PackageDefinition {
  cached ??= protoLoader.loadSync(PROTO_PATH, PROTO_LOADER_OPTIONS);
  return cached;
}

/**
 * A request message that protobuf could not decode. The server's deserializers return it
 * instead of throwing, so that the handler answers INVALID_ARGUMENT (BAD_REQUEST): grpc-js
 * itself answers a throwing deserializer with INTERNAL, a server fault, though the bytes are
 * the caller's mistake (EXTENSIONS.md 6, "every error answer is in the catalog").
 */
export class MalformedMessage {
  constructor(readonly reason: string) {}
}

/** The package definition of every service the server offers (parsed once per process). */
let served: protoLoader.PackageDefinition | undefined;

/**
 * Loads (once) the package definition of everything the server serves: `rules.proto` and the
 * standard health proto. Server reflection (./server.ts) describes exactly this.
 */
export function loadServedPackage(): protoLoader.PackageDefinition {
  served ??= protoLoader.loadSync(['rules.proto', HEALTH_PROTO_FILE], { ...PROTO_LOADER_OPTIONS, includeDirs: [PROTO_DIR] });
  return served;
}

const serverDefinitions = new Map<string, grpc.ServiceDefinition>();

/**
 * The definition of service `name` (of `loadServedPackage`) to pass to `grpc.Server#addService`:
 * the loaded one with each request deserializer returning a `MalformedMessage` where it would throw.
 */
export function servedDefinition(name: string): grpc.ServiceDefinition {
  let definition = serverDefinitions.get(name);
  if (definition === undefined) {
    const loaded = loadServedPackage()[name] as grpc.ServiceDefinition;
    const wrapped: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
    for (const [method, def] of Object.entries(loaded)) {
      const decode = def.requestDeserialize;
      wrapped[method] = {
        ...def,
        requestDeserialize: (bytes: Buffer) => {
          try {
            return decode(bytes);
          } catch (err) {
            return new MalformedMessage(err instanceof Error ? err.message : String(err));
          }
        },
      };
    }
    definition = wrapped as grpc.ServiceDefinition;
    serverDefinitions.set(name, definition);
  }
  return definition;
}

/** The `rules.RuleService` definition the server adds (see `servedDefinition`). */
export function ruleServiceDefinition(): grpc.ServiceDefinition {
  return servedDefinition(SERVICE_NAME);
}

/** The client constructor of `rules.RuleService` (tests, bench, docs example). */
export function ruleServiceClient(): grpc.ServiceClientConstructor {
  const pkg = grpc.loadPackageDefinition(loadRulesPackage());
  return (pkg['rules'] as grpc.GrpcObject)['RuleService'] as grpc.ServiceClientConstructor;
}
