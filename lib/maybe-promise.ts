/**
 * A value now, or a promise of it. The hot path's steps (session check, cookie decode, the route
 * core and the grab route's handler) answer from process memory most of the time; returning the
 * value itself there, instead of a promise, spares the promise, its microtask turn and (with
 * Next's AsyncLocalStorage installed in the same process) an async-hook call per step. Measured
 * on a refused grab: docs/hot-server.md#refusals-without-a-promise.
 */
export type MaybePromise<T> = T | Promise<T>;

/** `next(v)` at once when `v` is a value, after it settles when it is a promise. */
export function andThen<T, R>(v: MaybePromise<T>, next: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return v instanceof Promise ? v.then(next) : next(v);
}
