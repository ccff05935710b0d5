/**
 * Server reflection (`grpc.reflection.v1.ServerReflection` and `v1alpha`, EXTENSIONS.md 5) from
 * @grpc/reflection, over the package definition the server serves (./proto.ts
 * `loadServedPackage`), built on the first reflection call.
 *
 * NOTE (start-up time): building the reflection index of the descriptors costs a few hundred
 * milliseconds of CPU on a loaded machine, and most servers never get a reflection call. So at
 * start only the two reflection services are registered (their definitions loaded from the
 * protos @grpc/reflection ships); the first call builds the `ReflectionService` and takes its
 * handlers through its public `addToServer(Pick<Server, 'addService'>)`.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { loadPackageDefinition, type GrpcObject, type Server, type ServiceClientConstructor, type UntypedHandleCall } from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { loadServedPackage } from './proto.js';

/** The reflection versions served, by package. */
const VERSIONS = ['v1', 'v1alpha'] as const;

/**
 * The proto-loader options @grpc/reflection loads its protos with (its `PROTO_LOADER_OPTS`): its
 * handlers read camelCase fields and write `bytes` as arrays, so the definitions registered here
 * must decode and encode exactly as its own would.
 */
const REFLECTION_LOADER_OPTIONS: protoLoader.Options = { longs: String, enums: String, bytes: Array, defaults: true, oneofs: true };

/** Directory of the protos @grpc/reflection ships (`grpc/reflection/<version>/reflection.proto`). */
function reflectionProtoDir(): string {
  return join(dirname(createRequire(import.meta.url).resolve('@grpc/reflection')), '..', 'proto');
}

/** Registers both reflection services on `server`; the reflection index is built on the first call. */
export function addReflection(server: Pick<Server, 'addService'>): void {
  const dir = reflectionProtoDir();
  let handlers: Map<string, UntypedHandleCall> | undefined;
  /** The handler of `path` (`/grpc.reflection.v1.ServerReflection/ServerReflectionInfo`), built once. */
  const handlerOf = (path: string): UntypedHandleCall => {
    if (handlers === undefined) {
      const built = new Map<string, UntypedHandleCall>();
      new ReflectionService(loadServedPackage()).addToServer({
        addService: (definition, implementation) => {
          for (const [method, def] of Object.entries(definition)) built.set(def.path, implementation[method] as UntypedHandleCall);
        },
      });
      handlers = built;
    }
    const handler = handlers.get(path);
    if (handler === undefined) throw new Error(`no reflection handler for ${path}`);
    return handler;
  };
  for (const version of VERSIONS) {
    const definition = protoLoader.loadSync(`grpc/reflection/${version}/reflection.proto`, { ...REFLECTION_LOADER_OPTIONS, includeDirs: [dir] });
    const reflection = (loadPackageDefinition(definition)['grpc'] as GrpcObject)['reflection'] as GrpcObject;
    const service = ((reflection[version] as GrpcObject)['ServerReflection'] as ServiceClientConstructor).service;
    const implementation: Record<string, UntypedHandleCall> = {};
    for (const [method, def] of Object.entries(service)) {
      implementation[method] = ((call: unknown, callback?: unknown) =>
        (handlerOf(def.path) as (c: unknown, cb?: unknown) => void)(call, callback)) as UntypedHandleCall;
    }
    server.addService(service, implementation);
  }
}
