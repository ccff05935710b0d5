import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigOrExit, type CliIo } from '../../../src/config/index.js';

class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

function fakeIo(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: { write: (s: string) => (io.out += s) },
    stderr: { write: (s: string) => (io.err += s) },
    exit: (code: number): never => {
      throw new Exit(code);
    },
  };
  return io;
}

test('loadConfigOrExit returns the config when the command line is valid', () => {
  const io = fakeIo();
  const config = loadConfigOrExit(['-p', '1234'], {}, io);
  assert.equal(config.httpAddr.port, 1234);
  assert.equal(io.out + io.err, '');
});

test('--help prints the help to stdout and exits 0', () => {
  const io = fakeIo();
  assert.throws(
    () => loadConfigOrExit(['--help'], {}, io),
    (e: unknown) => e instanceof Exit && e.code === 0,
  );
  assert.match(io.out, /^Usage: svc-server/);
  assert.equal(io.err, '');
});

test('--version prints the version to stdout and exits 0', () => {
  const io = fakeIo();
  assert.throws(
    () => loadConfigOrExit(['--version'], {}, io, { version: '1.2.3' }),
    (e: unknown) => e instanceof Exit && e.code === 0,
  );
  assert.equal(io.out, '1.2.3\n');
});

test('a config error prints the reason to stderr and exits 2', () => {
  const io = fakeIo();
  assert.throws(
    () => loadConfigOrExit([], { SVC_ROLE: 'boss' }, io),
    (e: unknown) => e instanceof Exit && e.code === 2,
  );
  assert.equal(io.out, '');
  assert.equal(io.err, 'svc-server: SVC_ROLE must be one of standalone, writer, reader, got "boss"\n(see svc-server --help)\n');
});
