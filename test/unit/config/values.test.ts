import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ValueError,
  parseAddress,
  parseBool,
  parseChoice,
  parseDecimal,
  parseHttpUrl,
  parseInteger,
  parseList,
  parsePattern,
  parseText,
} from '../../../src/config/values.js';

test('parseBool accepts true/false/1/0/yes/no in any case, with spaces', () => {
  for (const t of ['true', 'TRUE', 'True', '1', 'yes', 'YES', ' true ']) assert.equal(parseBool(t), true, t);
  for (const f of ['false', 'FALSE', '0', 'no', 'No', ' false']) assert.equal(parseBool(f), false, f);
});

test('parseBool rejects anything else with the list of accepted words', () => {
  for (const bad of ['', 'on', 'off', 'y', '2', 'truee']) {
    assert.throws(() => parseBool(bad), {
      name: 'ValueError',
      message: `must be a boolean (true, false, 1, 0, yes, no), got ${JSON.stringify(bad)}`,
    });
  }
});

test('parseInteger: digits only, within bounds, messages by range', () => {
  assert.equal(parseInteger('10', 1), 10);
  assert.equal(parseInteger(' 0 ', 0), 0);
  assert.equal(parseInteger('65535', 0, 65535), 65535);
  assert.throws(() => parseInteger('abc', 1), { message: 'must be a positive integer, got "abc"' });
  assert.throws(() => parseInteger('0', 1), { message: 'must be a positive integer, got "0"' });
  assert.throws(() => parseInteger('-1', 0), { message: 'must be a non-negative integer, got "-1"' });
  assert.throws(() => parseInteger('1.5', 0), { message: 'must be a non-negative integer, got "1.5"' });
  assert.throws(() => parseInteger('1e3', 0), ValueError);
  assert.throws(() => parseInteger('', 0), ValueError);
  assert.throws(() => parseInteger('99999999999999999999', 0), ValueError);
  assert.throws(() => parseInteger('65536', 0, 65535), { message: 'must be an integer from 0 to 65535, got "65536"' });
  assert.throws(() => parseInteger('3', 5), { message: 'must be an integer >= 5, got "3"' });
});

test('parseDecimal accepts integers and decimals within bounds', () => {
  assert.equal(parseDecimal('0', 0, 100), 0);
  assert.equal(parseDecimal('12.5', 0, 100), 12.5);
  assert.equal(parseDecimal('100', 0, 100), 100);
  for (const bad of ['100.1', '-1', 'abc', '', '1e2', 'NaN', 'Infinity']) {
    assert.throws(() => parseDecimal(bad, 0, 100), { message: `must be a number from 0 to 100, got ${JSON.stringify(bad)}` });
  }
});

test('parseChoice is case-insensitive and lists the choices', () => {
  assert.equal(parseChoice('Reader', ['standalone', 'writer', 'reader']), 'reader');
  assert.throws(() => parseChoice('boss', ['standalone', 'writer', 'reader']), {
    message: 'must be one of standalone, writer, reader, got "boss"',
  });
});

test('parseAddress: host:port, [ipv6]:port, :port', () => {
  assert.deepEqual(parseAddress('0.0.0.0:8080'), { host: '0.0.0.0', port: 8080 });
  assert.deepEqual(parseAddress('localhost:0'), { host: 'localhost', port: 0 });
  assert.deepEqual(parseAddress('[::1]:8080'), { host: '::1', port: 8080 });
  assert.deepEqual(parseAddress('[::]:65535'), { host: '::', port: 65535 });
  assert.deepEqual(parseAddress(':9000'), { host: '0.0.0.0', port: 9000 });
  assert.deepEqual(parseAddress('my-host.example:1'), { host: 'my-host.example', port: 1 });
});

test('parseAddress rejects bad forms with the expected shape in the message', () => {
  for (const bad of ['8080', 'host', 'host:', 'host:65536', 'host:-1', '::1:8080', 'a b:1', 'h/x:1', '[::1]8080', 'host:80a', '']) {
    assert.throws(
      () => parseAddress(bad),
      {
        message: `must be host:port with a port from 0 to 65535 (IPv6 as [::1]:8080), got ${JSON.stringify(bad)}`,
      },
      bad,
    );
  }
});

test('parseText keeps the text and rejects blank text', () => {
  assert.equal(parseText(' ./my rules '), ' ./my rules ');
  assert.throws(() => parseText(''), { message: 'must not be empty' });
  assert.throws(() => parseText('  '), { message: 'must not be empty' });
});

test('parsePattern trims and checks', () => {
  assert.equal(parsePattern(' a.b ', /^[a-z.]+$/, 'letters'), 'a.b');
  assert.throws(() => parsePattern('A', /^[a-z]+$/, 'lower-case letters'), { message: 'must be lower-case letters, got "A"' });
});

test('parseHttpUrl accepts only http(s) URLs', () => {
  assert.equal(parseHttpUrl('http://127.0.0.1:4318'), 'http://127.0.0.1:4318');
  assert.equal(parseHttpUrl('https://otel.example/v1/traces'), 'https://otel.example/v1/traces');
  for (const bad of ['localhost:4318', 'ftp://x', 'nats://x:4222', 'not a url']) {
    assert.throws(() => parseHttpUrl(bad), { message: `must be an http:// or https:// URL, got ${JSON.stringify(bad)}` });
  }
});

test('parseList splits on commas and drops blanks', () => {
  assert.deepEqual(parseList('a, b,,c ,'), ['a', 'b', 'c']);
  assert.deepEqual(parseList(''), []);
});
