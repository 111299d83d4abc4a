// Dataset search for searchTest and, later, chat: one code path, so that both
// rank alike. Models are reached only through the gateway.
import type { Kysely } from 'kysely';
import type { DatasetsStore } from '../datasets/store.js';
import { errors } from '../http/errors.js';
import type { KeyCaller } from '../keys/auth.js';
import type { GatewayClient } from '../gateway-client/index.js';
import type { ModelConfig } from '../models/config-file.js';
import { searchDataset, type SearchMode, type SearchResult } from '../retrieval/index.js';
import { extendQuery, type ExtensionResult } from './query-extension.js';

export interface SearchRequest {
  datasetIds: string[];
  text: string;
  mode: SearchMode;
  limit?: number;
  similarity?: number;
  embeddingWeight?: number;
  usingReRank?: boolean;
  rerankModel?: string;
  extension?: { model: string; background?: string; history?: { role: string; content: string }[] };
  /** Queries a caller already extended (chat does, to record that step on its own). */
  extensionQueries?: string[];
  /** Datasets gone since the caller chose them (an app's) are skipped and named in missingDatasets instead of a 404. */
  skipMissing?: boolean;
}

export class SearchService {
  constructor(
    private readonly db: Kysely<any>,
    private readonly datasets: DatasetsStore,
    private readonly gateway: GatewayClient,
    private readonly models: ModelConfig,
  ) {}

  async search(caller: KeyCaller, req: SearchRequest): Promise<SearchResult & { extension?: ExtensionResult; missingDatasets: string[] }> {
    const datasets = await this.datasets.teamDatasets(caller.teamId, req.datasetIds);
    const missingDatasets = req.datasetIds.filter((id) => !datasets.some((d) => d.id === id));
    if (missingDatasets.length && !req.skipMissing) throw errors.notFound(`Dataset ${missingDatasets[0]}`);
    const datasetIds = req.datasetIds.filter((id) => !missingDatasets.includes(id));
    const vectorModels = new Set(datasets.map((d) => d.vector_model));
    if (req.mode !== 'fullTextRecall' && vectorModels.size > 1) {
      throw errors.badField('datasetIds', `these datasets use different vector models (${[...vectorModels].join(', ')}); search them with fullTextRecall or one at a time`);
    }
    const vectorModel = [...vectorModels][0]!;
    if (req.mode !== 'fullTextRecall' && datasetIds.length && !this.models.vectorModels.some((m) => m.model === vectorModel)) {
      throw errors.badField('searchMode', `the dataset's vector model ${vectorModel || '(none)'} is not configured; use fullTextRecall`);
    }
    if (req.usingReRank) {
      const rerankModel = req.rerankModel ?? this.models.reRankModels[0]?.model;
      if (!rerankModel) throw errors.badField('rerankModel', 'no rerank model is configured');
      req = { ...req, rerankModel };
    }
    let extension: ExtensionResult | undefined;
    if (req.extension) {
      if (!this.models.llmModels.some((m) => m.model === req.extension!.model)) throw errors.badField('datasetSearchExtensionModel', `"${req.extension.model}" is not a configured LLM`);
      extension = await extendQuery(this.gateway, req.extension.model, req.text, req.extension);
    }
    const result = await searchDataset(
      this.db,
      {
        datasetIds, text: req.text, extensionQueries: extension?.queries ?? req.extensionQueries, mode: req.mode,
        embeddingWeight: req.embeddingWeight, similarity: req.similarity, limit: req.limit,
        usingReRank: req.usingReRank, rerankModel: req.rerankModel, efSearch: this.models.systemEnv.hnswEfSearch,
      },
      {
        embed: async (texts) => (await this.gateway.embeddings(vectorModel, texts)).vectors,
        rerank: async (query, docs) => (await this.gateway.rerank(req.rerankModel!, query, docs)).results.map((r) => ({ index: r.index, score: r.relevanceScore })),
      },
    );
    return { ...result, extension, missingDatasets };
  }
}
