// Fills the bench's embedding cache for SciFact (chunks and queries) without
// running the searches: `node packages/platform/bench/scifact-embed.mjs`.
import { prepareScifactVectors } from './scifact-vectors.mjs';
await prepareScifactVectors({ log: console.log });
