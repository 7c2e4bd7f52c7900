/** A node of a {@link LinkedList}: the links live on the element itself, so linking allocates nothing. @internal */
export interface ListNode<N> {
  prev: N | undefined;
  next: N | undefined;
}

/**
 * An intrusive doubly-linked list: O(1) append and O(1) removal of any node,
 * which a FIFO queue whose waiters may abort, and an LRU order, both need.
 * @internal
 */
export class LinkedList<N extends ListNode<N>> {
  /** The oldest node. */
  head: N | undefined;
  /** The newest node. */
  tail: N | undefined;

  /** Adds `node` (not in any list) at the tail. */
  append(node: N): void {
    node.prev = this.tail;
    node.next = undefined;
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
  }

  /** Removes `node`, which must be in this list. */
  unlink(node: N): void {
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = undefined;
    node.next = undefined;
  }

  /** Forgets every node. */
  clear(): void {
    this.head = undefined;
    this.tail = undefined;
  }
}
