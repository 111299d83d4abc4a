// An application's search of its knowledge bases, with its settings: the
// chat's search step and the application's MCP `search` tool ask the same
// search, so that a quote one finds the other finds too.
import type { AppSettings } from '@kbchat/contracts';
import type { SearchRequest } from './service.js';

export function appSearchRequest(s: AppSettings['search'], datasetIds: string[], text: string, extensionQueries?: string[]): SearchRequest {
  return {
    datasetIds,
    text,
    mode: s.searchMode,
    limit: s.limit,
    similarity: s.similarity,
    embeddingWeight: s.embeddingWeight,
    usingReRank: s.usingReRank,
    rerankModel: s.rerankModel,
    extensionQueries,
    // A dataset deleted after the app was made is skipped and named, not fatal.
    skipMissing: true,
    // The app's user never chose a searchMode: a dataset whose vector model is gone is searched by full text.
    fullTextWithoutVectorModel: true,
  };
}
