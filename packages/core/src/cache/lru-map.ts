import { LinkedList } from '../pool/linked-list.js';

interface Node<K, V> {
  key: K;
  value: V;
  /** Toward the least recently used end. */
  prev: Node<K, V> | undefined;
  /** Toward the most recently used end. */
  next: Node<K, V> | undefined;
}

/**
 * A size-bounded map in least-recently-used order: a `Map` for lookup plus an
 * intrusive doubly-linked list for order.
 *
 * Why not just a `Map`'s insertion order (delete + re-set to promote,
 * `keys().next()` to find the oldest)? V8 leaves deleted slots in place until
 * the table is rehashed, and `keys().next()` walks over them: with steady
 * eviction the "O(1)" oldest lookup skipped thousands of holes, measured ~6×
 * slower per new key at 10,000 entries. The list makes every step O(1) and
 * promotion touches no hash table at all.
 * @internal
 */
export class LruMap<K, V> {
  private readonly nodes = new Map<K, Node<K, V>>();
  /** Least recently used at the head. */
  private readonly order = new LinkedList<Node<K, V>>();

  constructor(private readonly maxSize: number) {}

  /** Entries held. */
  get size(): number {
    return this.nodes.size;
  }

  /** The value for `key`, marked most recently used. */
  get(key: K): V | undefined {
    const node = this.nodes.get(key);
    if (node === undefined) return undefined;
    this.promote(node);
    return node.value;
  }

  /**
   * Stores `value` as the most recently used entry. Returns true when the
   * least recently used entry was evicted to make room.
   */
  set(key: K, value: V): boolean {
    const node = this.nodes.get(key);
    if (node !== undefined) {
      node.value = value;
      this.promote(node);
      return false;
    }
    let evicted = false;
    const victim = this.order.head;
    if (this.nodes.size >= this.maxSize && victim !== undefined) {
      this.order.unlink(victim);
      this.nodes.delete(victim.key);
      evicted = true;
    }
    const fresh: Node<K, V> = { key, value, prev: undefined, next: undefined };
    this.nodes.set(key, fresh);
    this.order.append(fresh);
    return evicted;
  }

  /** Removes `key`; true if it was present. */
  delete(key: K): boolean {
    const node = this.nodes.get(key);
    if (node === undefined) return false;
    this.order.unlink(node);
    this.nodes.delete(key);
    return true;
  }

  /** Removes every entry. */
  clear(): void {
    this.nodes.clear();
    this.order.clear();
  }

  private promote(node: Node<K, V>): void {
    if (node !== this.order.tail) {
      this.order.unlink(node);
      this.order.append(node);
    }
  }
}
