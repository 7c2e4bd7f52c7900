import { Metadata, type MetadataValue } from 'nice-grpc-common';

type Entry = [string, Array<string | Uint8Array>];

/**
 * The caller's metadata with one more header (`grpc-timeout`,
 * `grpc-previous-rpc-attempts`), read through without copying it: a copy
 * is a `Metadata` of its own (a map and eight closures, about 1 KB), made
 * here only if a middleware below writes. The caller's object is never
 * changed, so it may serve several calls at once.
 * @internal
 */
export class StampedMetadata implements Metadata {
  /** The copy every call goes to once something below wrote. */
  private own: Metadata | undefined = undefined;

  /**
   * @param base the caller's metadata (`undefined` for none)
   * @param key the added header, lower case
   * @param value its value, printable ASCII
   */
  constructor(
    private readonly base: Metadata | undefined,
    private readonly key: string,
    private readonly value: string,
  ) {}

  /** The copy, made at the first write. */
  private written(): Metadata {
    this.own ??= Metadata(this.entries());
    return this.own;
  }

  set<Key extends string>(key: Key, value: MetadataValue<Key> | Array<MetadataValue<Key>>): this {
    this.written().set(key, value);
    return this;
  }

  append<Key extends string>(key: Key, value: MetadataValue<Key>): this {
    this.written().append(key, value);
    return this;
  }

  delete(key: string): void {
    this.written().delete(key);
  }

  get<Key extends string>(key: Key): MetadataValue<Key> | undefined {
    if (this.own !== undefined) return this.own.get(key);
    if (key.toLowerCase() === this.key) return this.value as MetadataValue<Key>;
    return this.base?.get(key);
  }

  getAll<Key extends string>(key: Key): Array<MetadataValue<Key>> {
    if (this.own !== undefined) return this.own.getAll(key);
    if (key.toLowerCase() === this.key) return [this.value as MetadataValue<Key>];
    return this.base === undefined ? [] : this.base.getAll(key);
  }

  has(key: string): boolean {
    if (this.own !== undefined) return this.own.has(key);
    return key.toLowerCase() === this.key || this.base?.has(key) === true;
  }

  [Symbol.iterator](): IterableIterator<Entry> {
    return this.own === undefined ? this.entries() : this.own[Symbol.iterator]();
  }

  /** The base's entries, its own value of the key replaced by ours (an array: cheaper than a generator). */
  private entries(): IterableIterator<Entry> {
    const key = this.key;
    const entries: Entry[] = [];
    if (this.base !== undefined) {
      for (const entry of this.base) if (entry[0] !== key) entries.push(entry);
    }
    entries.push([key, [this.value]]);
    return entries[Symbol.iterator]();
  }
}
