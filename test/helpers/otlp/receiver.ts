/**
 * A real OTLP/HTTP trace receiver for tests: a node:http server that accepts
 * `POST /v1/traces` with a protobuf `ExportTraceServiceRequest` body, decodes it with
 * protobufjs (./trace.proto, the real field numbers) and keeps every span, flattened with its
 * resource attributes. Anything else is answered 404 and remembered in `rejected`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import protobuf from 'protobufjs';

const ROOT = protobuf.loadSync(join(import.meta.dirname, 'trace.proto'));
const REQUEST = ROOT.lookupType('opentelemetry.proto.ExportTraceServiceRequest');

/** Attribute values as decoded (int64 as number). */
export type AttrValue = string | number | boolean | null | AttrValue[];

/** One received span. */
export interface ReceivedSpan {
  /** 32 hex digits. */
  readonly traceId: string;
  /** 16 hex digits. */
  readonly spanId: string;
  /** 16 hex digits, or '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** 1 INTERNAL, 2 SERVER, 3 CLIENT. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, AttrValue>>;
  /** 0 UNSET, 1 OK, 2 ERROR. */
  readonly status: { readonly code: number; readonly message: string };
  readonly resource: Readonly<Record<string, AttrValue>>;
  readonly scope: string;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** Base URL, `http://127.0.0.1:<port>` (pass it as `--otlp-endpoint`). */
  readonly url: string;
  /** Every span received so far, in arrival order. */
  readonly spans: ReceivedSpan[];
  /** Number of export requests received on /v1/traces. */
  readonly exports: () => number;
  /** Requests answered 404: `<METHOD> <path>`. */
  readonly rejected: string[];
  /** Content types of the export requests. */
  readonly contentTypes: string[];
  /** Polls until `pred(spans)` holds (every 20 ms); throws with the spans seen after `timeoutMs`. */
  waitFor(pred: (spans: readonly ReceivedSpan[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a receiver on an ephemeral port of 127.0.0.1. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const rejected: string[] = [];
  const contentTypes: string[] = [];
  let exports = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        rejected.push(`${req.method} ${req.url}`);
        res.writeHead(404).end();
        return;
      }
      exports++;
      contentTypes.push(String(req.headers['content-type']));
      try {
        spans.push(...decodeExport(Buffer.concat(chunks)));
      } catch (err) {
        rejected.push(`undecodable body: ${(err as Error).message}`);
        res.writeHead(400).end();
        return;
      }
      // An empty ExportTraceServiceResponse: full success.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports: () => exports,
    rejected,
    contentTypes,
    async waitFor(pred, what, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pred(spans)) {
        if (Date.now() > deadline) {
          throw new Error(`not within ${timeoutMs} ms: ${what}; spans: ${JSON.stringify(spans.map((s) => [s.name, s.attributes]))}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Decodes one `ExportTraceServiceRequest` body into flat spans. */
export function decodeExport(body: Uint8Array): ReceivedSpan[] {
  const msg = REQUEST.toObject(REQUEST.decode(body), { longs: Number, enums: Number, defaults: false }) as any;
  const out: ReceivedSpan[] = [];
  for (const rs of msg.resourceSpans ?? []) {
    const resource = attrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name ?? '',
          kind: s.kind ?? 0,
          attributes: attrs(s.attributes),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
          resource,
          scope: ss.scope?.name ?? '',
        });
      }
    }
  }
  return out;
}

function hex(bytes: Uint8Array | undefined): string {
  return bytes === undefined ? '' : Buffer.from(bytes).toString('hex');
}

function attrs(list: Array<{ key: string; value?: any }> | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kv of list ?? []) out[kv.key] = value(kv.value);
  return out;
}

function value(v: any): AttrValue {
  if (v === undefined || v === null) return null;
  if (typeof v.stringValue === 'string') return v.stringValue;
  if (typeof v.boolValue === 'boolean') return v.boolValue;
  if (v.intValue !== undefined && v.intValue !== null) return Number(v.intValue);
  if (typeof v.doubleValue === 'number') return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return null;
}
