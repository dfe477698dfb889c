// Measures that cost a pod (a volume's use, by a Job): one at a time per key, and one taken within `freshMs` is
// answered as it is, so reads of a workspace do not each start a Job.
export class RecentMeasures<K, V> {
  private readonly taken = new Map<K, { value: V; atMs: number }>();
  private readonly running = new Map<K, Promise<V>>();

  constructor(private readonly freshMs: number, private readonly nowMs: () => number = () => performance.now()) {}

  of(key: K, measure: () => Promise<V>): Promise<V> {
    const last = this.taken.get(key);
    if (last && this.nowMs() - last.atMs < this.freshMs) return Promise.resolve(last.value);
    const pending = this.running.get(key);
    if (pending) return pending;
    const started = measure().then((value) => {
      this.taken.set(key, { value, atMs: this.nowMs() });
      return value;
    }).finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }

  /** Forgets a key's measure (its volume changed hands: archived, restored, removed). */
  forget(key: K): void {
    this.taken.delete(key);
  }
}
