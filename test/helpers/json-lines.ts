/** Parses the JSON lines written to an in-memory sink (audit lines in tests); blank lines skipped. */
export function parseJsonLines(chunks: readonly string[]): Record<string, unknown>[] {
  return chunks
    .join('')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
