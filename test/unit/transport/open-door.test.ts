/**
 * The open-door decision (EXTENSIONS.md 1 "Warning"): which listeners take calls from beyond
 * loopback while authentication is off.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoopbackHost, openDoorMessage, openDoors, type OpenDoorConfig } from '../../../src/transport/open-door.js';

const BASE: OpenDoorConfig = {
  httpAddr: { host: '127.0.0.1', port: 8080 },
  grpcAddr: { host: '127.0.0.1', port: 50051 },
  disableHttp: false,
  disableGrpc: false,
  authKeysFile: null,
  authJwtJwksFile: null,
};

describe('isLoopbackHost', () => {
  it('is true for localhost, 127.0.0.0/8 and ::1 in its spellings', () => {
    for (const host of [
      'localhost',
      'LOCALHOST',
      '127.0.0.1',
      '127.1.2.3',
      '127.255.255.255',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::0:1',
      '::ffff:127.0.0.1',
    ]) {
      assert.equal(isLoopbackHost(host), true, host);
    }
  });

  it('is false for the wildcards, other addresses and other names', () => {
    for (const host of [
      '0.0.0.0',
      '::',
      '[::]',
      '10.0.0.1',
      '128.0.0.1',
      '126.255.255.255',
      '127.0.0.256',
      '::2',
      '::ffff:10.0.0.1',
      'fe80::1',
      'example.com',
      'localhost.example.com',
      '',
    ]) {
      assert.equal(isLoopbackHost(host), false, host);
    }
  });
});

describe('openDoors', () => {
  it('is empty when every enabled listener is on loopback', () => {
    assert.deepEqual(openDoors(BASE), []);
    assert.deepEqual(openDoors({ ...BASE, httpAddr: { host: 'localhost', port: 1 }, grpcAddr: { host: '::1', port: 2 } }), []);
  });

  it('names each listener that is not on loopback', () => {
    assert.deepEqual(openDoors({ ...BASE, httpAddr: { host: '0.0.0.0', port: 8080 } }), [{ listener: 'http', address: '0.0.0.0:8080' }]);
    assert.deepEqual(openDoors({ ...BASE, httpAddr: { host: '0.0.0.0', port: 8080 }, grpcAddr: { host: '::', port: 50051 } }), [
      { listener: 'http', address: '0.0.0.0:8080' },
      { listener: 'grpc', address: '[::]:50051' },
    ]);
  });

  it('skips a disabled listener', () => {
    const open = { ...BASE, httpAddr: { host: '0.0.0.0', port: 8080 }, grpcAddr: { host: '0.0.0.0', port: 50051 } };
    assert.deepEqual(openDoors({ ...open, disableHttp: true }), [{ listener: 'grpc', address: '0.0.0.0:50051' }]);
    assert.deepEqual(openDoors({ ...open, disableHttp: true, disableGrpc: true }), []);
  });

  it('is empty when authentication is on (keys file or JWKS file)', () => {
    const open = { ...BASE, httpAddr: { host: '0.0.0.0', port: 8080 }, grpcAddr: { host: '0.0.0.0', port: 50051 } };
    assert.deepEqual(openDoors({ ...open, authKeysFile: '/etc/svc/keys.json' }), []);
    assert.deepEqual(openDoors({ ...open, authJwtJwksFile: '/etc/svc/jwks.json' }), []);
  });
});

describe('openDoorMessage', () => {
  it('names the addresses, what anyone can do, and the flags that turn authentication on', () => {
    const text = openDoorMessage([
      { listener: 'http', address: '0.0.0.0:8080' },
      { listener: 'grpc', address: '[::]:50051' },
    ]);
    assert.equal(
      text,
      'authentication is off: anyone who can reach 0.0.0.0:8080 (HTTP) and [::]:50051 (gRPC) can read and change rules; ' +
        'turn authentication on with --auth-keys-file or --auth-jwt-jwks-file, or listen on a loopback address',
    );
  });
});
