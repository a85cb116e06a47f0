/**
 * The test knobs, read from the environment here and not in the product's env schema
 * (lib/env.ts): they change how a test reaches the product, never what the product does.
 */

/**
 * `TEST_DOOR=hot`: callRoute (and the hostile sweeps) send requests for the hot routes over real
 * HTTP through the hot server (e2e/support/hot-door.ts) instead of calling the handler, so the
 * same tests prove both doors. `handler` (the default) calls the route handler directly.
 */
export const testDoor: 'handler' | 'hot' = process.env.TEST_DOOR === 'hot' ? 'hot' : 'handler';
