/**
 * Clients of the server's standard services for integration tests, built with grpc-js the way
 * any other client would be (nothing from the server's own proto loading):
 *
 * - `reflect`: a client of `grpc.reflection.v1.ServerReflection` (or `v1alpha`), built from the
 *   reflection protos that @grpc/reflection publishes. It lists services and fetches file
 *   descriptors (by symbol or file name), as grpcurl and grpcui do.
 * - `clientFromReflection`: turns fetched FileDescriptorProtos into a package definition
 *   (proto-loader's `loadFileDescriptorSetFromBuffer`) and a client constructor, so a test can
 *   call an RPC knowing only what reflection told it.
 * - `healthClient`: a client of `grpc.health.v1.Health` from proto/grpc/health/v1/health.proto.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_DIR } from '../../src/transport/grpc/proto.js';

const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

/** The reflection protos shipped by @grpc/reflection (build/proto/grpc/reflection/{v1,v1alpha}/reflection.proto). */
function reflectionProtoDir(): string {
  const entry = createRequire(import.meta.url).resolve('@grpc/reflection');
  return join(dirname(entry), '..', 'proto');
}

/** One reflection answer (`ServerReflectionResponse`, proto-loader shape with `oneofs`). */
export interface ReflectionAnswer {
  message_response: 'list_services_response' | 'file_descriptor_response' | 'error_response' | string;
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number; error_message: string };
}

/** A reflection request: exactly one of these, as in `ServerReflectionRequest`. */
export type ReflectionQuery = { list_services: string } | { file_containing_symbol: string } | { file_by_filename: string };

/**
 * Sends `queries` on one `ServerReflectionInfo` stream (bidirectional, as grpcurl does) and
 * resolves to the answers in order.
 */
export function reflect(target: string, queries: readonly ReflectionQuery[], version: 'v1' | 'v1alpha' = 'v1'): Promise<ReflectionAnswer[]> {
  const def = protoLoader.loadSync(`grpc/reflection/${version}/reflection.proto`, { ...LOADER_OPTIONS, includeDirs: [reflectionProtoDir()] });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const Ctor = pkg.grpc.reflection[version].ServerReflection as grpc.ServiceClientConstructor;
  const client = new Ctor(target, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => {
    const answers: ReflectionAnswer[] = [];
    const call = (client as any).ServerReflectionInfo({ deadline: Date.now() + 20_000 }) as grpc.ClientDuplexStream<object, ReflectionAnswer>;
    call.on('data', (a: ReflectionAnswer) => {
      answers.push(a);
      if (answers.length === queries.length) call.end();
    });
    call.on('error', (err) => {
      client.close();
      reject(err);
    });
    call.on('end', () => {
      client.close();
      resolve(answers);
    });
    for (const q of queries) call.write({ host: '', ...q });
    if (queries.length === 0) call.end();
  });
}

/** A FileDescriptorSet (field 1: repeated FileDescriptorProto) holding `files`, encoded by hand. */
export function fileDescriptorSet(files: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    const len: number[] = [];
    let n = f.length;
    while (n > 0x7f) {
      len.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    len.push(n);
    parts.push(Buffer.from([0x0a, ...len]), f);
  }
  return Buffer.concat(parts);
}

/** The client constructor of `service` (e.g. `rules.RuleService`) built only from reflected descriptors. */
export function clientFromReflection(files: readonly Buffer[], service: string): grpc.ServiceClientConstructor {
  const def = protoLoader.loadFileDescriptorSetFromBuffer(fileDescriptorSet(files), LOADER_OPTIONS);
  let node: any = grpc.loadPackageDefinition(def);
  for (const part of service.split('.')) node = node?.[part];
  if (typeof node !== 'function') throw new Error(`no service ${service} in the reflected descriptors`);
  return node as grpc.ServiceClientConstructor;
}

/** A `grpc.health.v1.Health` client of `target`; close it when done. */
export function healthClient(target: string): grpc.Client & Record<string, Function> {
  const def = protoLoader.loadSync('grpc/health/v1/health.proto', { ...LOADER_OPTIONS, includeDirs: [PROTO_DIR] });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const Ctor = pkg.grpc.health.v1.Health as grpc.ServiceClientConstructor;
  return new Ctor(target, grpc.credentials.createInsecure()) as grpc.Client & Record<string, Function>;
}

/** `Health/Check` as a promise: the status name, or the error. */
export function healthCheck(client: grpc.Client & Record<string, Function>, service: string): Promise<{ status?: string; error?: grpc.ServiceError }> {
  return new Promise((resolve) => {
    (client['Check'] as Function).call(client, { service }, { deadline: Date.now() + 10_000 }, (err: grpc.ServiceError | null, res: { status: string }) =>
      resolve(err ? { error: err } : { status: res.status }),
    );
  });
}
