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

/** Fully qualified name of the service in the proto. */
export const SERVICE_NAME = 'rules.RuleService';

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

/** The `rules.RuleService` definition to pass to `grpc.Server#addService`. */
export function ruleServiceDefinition(): grpc.ServiceDefinition {
  return loadRulesPackage()[SERVICE_NAME] as grpc.ServiceDefinition;
}

/** The client constructor of `rules.RuleService` (tests, bench, docs example). */
export function ruleServiceClient(): grpc.ServiceClientConstructor {
  const pkg = grpc.loadPackageDefinition(loadRulesPackage());
  return (pkg['rules'] as grpc.GrpcObject)['RuleService'] as grpc.ServiceClientConstructor;
}
