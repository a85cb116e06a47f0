// Preloaded (node --import) into the bench's production servers for the shop scenario: turns on
// app/api/bench/constant, the bare-handler baseline, which a production server otherwise answers 404.
globalThis.__hmdpBenchRoutes = true;
