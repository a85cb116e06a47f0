// Preloaded (node --import) into the bench's web server for the `db` comparison of the seckill and
// grab scenarios: every grab in that process takes the original project's synchronous MySQL path
// (lib/seckill/grab-db.ts). A process-wide flag, not an env knob: the product has no such setting.
globalThis.__hmdpGrabInDb = true;
