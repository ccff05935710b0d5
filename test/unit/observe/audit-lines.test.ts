/**
 * Audit line text (property): whatever the fields, a line is exactly the JSON of
 * {timestamp, level: "INFO", event, ...fields} with the three standard keys first and not
 * overridable; reusing the formatted timestamp within a millisecond changes no byte.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { AuditLog } from '../../../src/observe/index.js';

function reference(timestamp: string, event: string, fields: Record<string, unknown>): string {
  const record: Record<string, unknown> = { timestamp, level: 'INFO', event, ...fields };
  record['timestamp'] = timestamp;
  record['level'] = 'INFO';
  record['event'] = event;
  return `${JSON.stringify(record)}\n`;
}

test('audit lines equal the reference record for arbitrary fields', () => {
  const key = fc.oneof(fc.string(), fc.constantFrom('timestamp', 'level', 'event', '__proto__', 'rule_name', '0', '12', '1x', 'toJSON'));
  fc.assert(
    fc.property(fc.string(), fc.dictionary(key, fc.jsonValue(), { maxKeys: 6 }), fc.integer({ min: 0, max: 4102444800000 }), (event, fields, ms) => {
      const lines: string[] = [];
      const audit = new AuditLog({ stdout: { write: (s: string) => lines.push(s) }, now: () => ms });
      audit.write(event, fields);
      audit.write(event, fields); // the second line reuses the formatted timestamp
      const want = reference(new Date(ms).toISOString(), event, fields);
      assert.deepEqual(lines, [want, want]);
    }),
    { numRuns: 400 },
  );
});

test('the timestamp follows the clock from one millisecond to the next', () => {
  let t = Date.UTC(2024, 0, 1, 0, 0, 0, 999);
  const lines: string[] = [];
  const audit = new AuditLog({ stdout: { write: (s: string) => lines.push(s) }, now: () => t });
  audit.write('a', {});
  t += 1;
  audit.write('b', {});
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as { timestamp: string }).timestamp),
    ['2024-01-01T00:00:00.999Z', '2024-01-01T00:00:01.000Z'],
  );
});
