/**
 * A binary min-heap over a numeric key: push and pop in O(log n), peek in O(1). Items are not
 * removed from the middle: a user marks an item dead and skips it when it surfaces (lazy deletion),
 * and rebuilds from the live ones (`rebuild`) when the dead outnumber them.
 */
export class MinHeap<T> {
  private items: T[] = [];

  constructor(private readonly key: (item: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    const k = this.key(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.key(a[parent]!) <= k) break;
      a[i] = a[parent]!;
      i = parent;
    }
    a[i] = item;
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      this.down(0);
    }
    return top;
  }

  /** Replaces the contents with `items` (in O(n)). */
  rebuild(items: T[]): void {
    this.items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private down(i: number): void {
    const a = this.items;
    const n = a.length;
    const item = a[i]!;
    const k = this.key(item);
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && this.key(a[child + 1]!) < this.key(a[child]!)) child++;
      if (this.key(a[child]!) >= k) break;
      a[i] = a[child]!;
      i = child;
    }
    a[i] = item;
  }
}
