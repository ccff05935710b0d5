/**
 * Values a higher layer derives from one compiled ruleset (the filter's prepared state), owned by
 * that compiled value: built on first use, then kept for as long as the compiled ruleset lives.
 * The ruleset layer does not know their types: a slot, created once by the layer that owns the
 * value, names it and types it.
 */

/** The typed name of one derived value. Create one per kind of value, at module load. */
export class DerivedSlot<T> {
  /** Never set: keeps `T` in the type so `DerivedValues.get` is typed by the slot. */
  declare private readonly _type: T;
  constructor(
    /** For debugging only. */
    readonly name: string,
  ) {}
}

/**
 * The derived values of one compiled ruleset. The compiled value is frozen; this holder is the
 * one part of it that fills in over time, and only through `get` (each value built once).
 */
export class DerivedValues {
  #values: Map<DerivedSlot<unknown>, unknown> | null = null;

  /** The value of `slot`, built by `build` on first use. */
  get<T>(slot: DerivedSlot<T>, build: () => T): T {
    const values = (this.#values ??= new Map());
    if (values.has(slot)) return values.get(slot) as T;
    const value = build();
    values.set(slot, value);
    return value;
  }
}
