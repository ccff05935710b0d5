/**
 * Ruleset names that pass the name rule (DECISIONS.md 1) but that no store may hold, each with
 * the reason (EXTENSIONS.md 6: "a reserved or otherwise refused ruleset name is 400 with the
 * reason"). Validation refuses them (./validate.ts) and the file store's layout
 * (src/store/layout.ts) refuses the same, from this one list.
 */

/** Reserved name → why it is refused. */
export const RESERVED_RULESET_NAMES: ReadonlyMap<string, string> = new Map([
  // NOTE: the default tenant's rule files live at the rules dir root, where `tenants.json` is the
  // tenant registry and `tenants/` holds the other tenants (DECISIONS.md 8).
  ['tenants', 'is reserved: the rules directory keeps the tenant registry in tenants.json'],
]);

/** Why `name` is refused as a ruleset name, or undefined when it is not reserved. */
export function reservedNameReason(name: string): string | undefined {
  return RESERVED_RULESET_NAMES.get(name);
}
