/**
 * The open-door warning (EXTENSIONS.md 1, "Warning"): with authentication off, a listener on an
 * address other processes' users or other machines can reach lets anyone read and change rules.
 * `openDoors` decides which listeners that is; src/server.ts logs the one warning line.
 * Pure: no I/O, no logger.
 */
import type { Config } from '../config/index.js';

/** The config slice the decision reads. */
export type OpenDoorConfig = Pick<Config, 'httpAddr' | 'grpcAddr' | 'disableHttp' | 'disableGrpc' | 'authKeysFile' | 'authJwtJwksFile'>;

/** One listener reachable without credentials: `{listener: 'http', address: '0.0.0.0:8080'}`. */
export interface OpenDoor {
  readonly listener: 'http' | 'grpc';
  readonly address: string;
}

/**
 * The TCP listeners that are open to callers who are not on this machine's loopback, when
 * authentication is off (neither `--auth-keys-file` nor `--auth-jwt-jwks-file`); empty when
 * authentication is on or every enabled listener is on loopback. The Unix socket is never one:
 * it is guarded by its file mode (`--uds-mode`).
 */
export function openDoors(config: OpenDoorConfig): OpenDoor[] {
  if (config.authKeysFile !== null || config.authJwtJwksFile !== null) return [];
  const doors: OpenDoor[] = [];
  if (!config.disableHttp && !isLoopbackHost(config.httpAddr.host)) doors.push({ listener: 'http', address: addressText(config.httpAddr) });
  if (!config.disableGrpc && !isLoopbackHost(config.grpcAddr.host)) doors.push({ listener: 'grpc', address: addressText(config.grpcAddr) });
  return doors;
}

/** The warning text naming the open addresses and the flags that close them. */
export function openDoorMessage(doors: readonly OpenDoor[]): string {
  const where = doors.map((d) => `${d.address} (${d.listener === 'http' ? 'HTTP' : 'gRPC'})`).join(' and ');
  return (
    `authentication is off: anyone who can reach ${where} can read and change rules; ` +
    'turn authentication on with --auth-keys-file or --auth-jwt-jwks-file, or listen on a loopback address'
  );
}

/**
 * True for `localhost`, 127.0.0.0/8 and ::1 (in any spelling, IPv4-mapped included). The
 * wildcards 0.0.0.0 and :: listen on every interface and are not loopback; nor is any other
 * host name, whose addresses cannot be known without a lookup.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === 'localhost.') return true;
  if (isIpv4Loopback(h)) return true;
  const v6 = expandIpv6(h);
  if (v6 === null) return false;
  if (v6.slice(0, 7).every((g) => g === 0) && v6[7] === 1) return true;
  // ::ffff:127.x.y.z (IPv4-mapped)
  return v6.slice(0, 5).every((g) => g === 0) && v6[5] === 0xffff && v6[6]! >> 8 === 127;
}

function isIpv4Loopback(h: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m !== null && m.slice(1).every((o) => Number(o) <= 255) && Number(m[1]) === 127;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part allowed), or null. */
function expandIpv6(h: string): number[] | null {
  let text = h.replace(/%.*$/, '');
  const v4 = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const o = v4.slice(2).map(Number);
    if (o.some((x) => x > 255)) return null;
    text = `${v4[1]}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  if (!/^[0-9a-f:]+$/.test(text) || !text.includes(':')) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}

function addressText(addr: { host: string; port: number }): string {
  return addr.host.includes(':') ? `[${addr.host}]:${addr.port}` : `${addr.host}:${addr.port}`;
}
