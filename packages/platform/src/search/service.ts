// Dataset search for searchTest and chat: one code path, so that both rank
// alike. Models are reached only through the gateway. A question longer than
// a model reads is cut for the search (and the result says how), never sent
// whole to be refused.
import type { QuestionCut, SearchOutcome } from '@kbchat/contracts';
import type { PlatformDb } from '../store/database.js';
import type { DatasetsStore } from '../datasets/store.js';
import { errors } from '../http/errors.js';
import type { KeyCaller } from '../keys/auth.js';
import { recordCall, type GatewayClient, type ModelCall } from '../gateway-client/index.js';
import type { SearchRecorder } from '../metrics/index.js';
import type { ModelConfig } from '../models/config-file.js';
import { searchDataset, type SearchMode } from '../retrieval/index.js';
import { extendQuery, type ExtensionResult } from './query-extension.js';
import { cutToTokens, DEFAULT_VECTOR_MAX_TOKENS, SEARCH_TEXT_MAX_TOKENS } from './token-limits.js';

export type { QuestionCut, SearchOutcome };

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
  /**
   * Datasets whose vector model config.json does not offer are searched by
   * full text (an app's chat, whose user never chose a searchMode), instead
   * of a 400 naming searchMode (searchTest, whose caller did).
   */
  fullTextWithoutVectorModel?: boolean;
}

export class SearchService {
  constructor(
    private readonly db: PlatformDb,
    private readonly datasets: DatasetsStore,
    private readonly gateway: GatewayClient,
    private readonly models: ModelConfig,
    private readonly metrics?: SearchRecorder,
  ) {}

  /** This service for one platform request: its model calls carry the request's id to the gateway (GatewayClient.forRequest). */
  forRequest(requestId: string): SearchService {
    return this.withGateway(this.gateway.forRequest(requestId));
  }

  /** This service with its model calls made through `gateway` (a chat turn's, which its other calls share). */
  withGateway(gateway: GatewayClient): SearchService {
    return new SearchService(this.db, this.datasets, gateway, this.models, this.metrics);
  }

  async search(caller: KeyCaller, req: SearchRequest): Promise<SearchOutcome> {
    const datasets = await this.datasets.teamDatasets(caller.teamId, req.datasetIds);
    const missingDatasets = req.datasetIds.filter((id) => !datasets.some((d) => d.id === id));
    if (missingDatasets.length && !req.skipMissing) throw errors.notFound(`Dataset ${missingDatasets[0]}`);
    const datasetIds = req.datasetIds.filter((id) => !missingDatasets.includes(id));
    const vectorModels = new Set(datasets.map((d) => d.vector_model));
    if (req.mode !== 'fullTextRecall' && vectorModels.size > 1) {
      throw errors.badField(
        'datasetIds',
        `these datasets use different vector models (${[...vectorModels].join(', ')}); search them with fullTextRecall or one at a time`,
      );
    }
    const vectorModel = [...vectorModels][0]!;
    const vectorConfig = this.models.vectorModels.find((m) => m.model === vectorModel);
    let mode = req.mode;
    const notes: string[] = [];
    if (mode !== 'fullTextRecall' && datasetIds.length && !vectorConfig) {
      const why = vectorModel
        ? `the datasets' vector model ${vectorModel} is not in config.json's vectorModels`
        : 'the datasets were made without a vector model (config.json had no vectorModels)';
      if (!req.fullTextWithoutVectorModel) throw errors.badField('searchMode', `${why}; use fullTextRecall`);
      mode = 'fullTextRecall';
      notes.push(`${why}: searched by full text only instead of ${req.mode}`);
    }
    if (req.usingReRank) {
      const rerankModel = req.rerankModel ?? this.models.reRankModels[0]?.model;
      if (!rerankModel) throw errors.badField('rerankModel', 'no rerank model is configured');
      req = { ...req, rerankModel };
    }
    const modelCalls: ModelCall[] = [];
    let extension: ExtensionResult | undefined;
    if (req.extension) {
      const llm = this.models.llmModels.find((m) => m.model === req.extension!.model);
      if (!llm) throw errors.badField('datasetSearchExtensionModel', `"${req.extension.model}" is not a configured LLM`);
      const ext = req.extension;
      extension = await recordCall(
        modelCalls,
        { step: 'queryExtension', kind: 'chat', model: llm.model },
        () => extendQuery(this.gateway, llm, req.text, ext),
        (r) => r.requestId,
      );
    }
    const question = req.text.trim();
    const searched = cutToTokens(question, SEARCH_TEXT_MAX_TOKENS);
    const maxToken = vectorConfig?.maxToken ?? DEFAULT_VECTOR_MAX_TOKENS;
    const embedded = mode === 'fullTextRecall' ? undefined : cutToTokens(searched.text, maxToken);
    // Extension queries are short, but a vector model's limit can be shorter still.
    const embedInput = (text: string) => (text === searched.text && embedded ? embedded.text : cutToTokens(text, maxToken).text);
    const started = performance.now();
    const result = await searchDataset(
      this.db,
      {
        datasetIds,
        text: searched.text,
        extensionQueries: extension?.queries ?? req.extensionQueries,
        mode,
        embeddingWeight: req.embeddingWeight,
        similarity: req.similarity,
        limit: req.limit,
        usingReRank: req.usingReRank,
        rerankModel: req.rerankModel,
        efSearch: this.models.systemEnv.hnswEfSearch,
      },
      {
        embed: async (texts) => {
          const call = { step: 'embeddings', kind: 'embeddings' as const, model: vectorModel };
          return (
            await recordCall(
              modelCalls,
              call,
              () => this.gateway.embeddings(vectorModel, texts.map(embedInput)),
              (r) => r.requestId,
            )
          ).vectors;
        },
        rerank: async (query, docs) => {
          const call = { step: 'rerank', kind: 'rerank' as const, model: req.rerankModel! };
          const r = await recordCall(
            modelCalls,
            call,
            () => this.gateway.rerank(req.rerankModel!, query, docs),
            (x) => x.requestId,
          );
          return r.results.map((x) => ({ index: x.index, score: x.relevanceScore }));
        },
      },
    ).catch((err: unknown) => {
      this.metrics?.searched(mode, (performance.now() - started) / 1000, false);
      throw err;
    });
    this.metrics?.searched(mode, (performance.now() - started) / 1000, true);
    let questionCut: QuestionCut | undefined;
    if (searched.cut || embedded?.cut) {
      questionCut = {
        questionChars: question.length,
        searchedChars: searched.text.length,
        ...(embedded ? { embeddedChars: embedded.text.length, vectorModel, maxToken } : {}),
      };
      const limit = vectorConfig?.maxToken ? 'its maxToken in config.json' : `config.json gives no maxToken for it: ${DEFAULT_VECTOR_MAX_TOKENS} assumed`;
      const parts = [
        searched.cut ? `the search read its first ${searched.text.length} characters (${SEARCH_TEXT_MAX_TOKENS} tokens)` : '',
        embedded?.cut ? `${vectorModel} embedded its first ${embedded.text.length} (${maxToken} tokens, ${limit})` : '',
      ];
      notes.push(`the question (${question.length} characters) is longer than the search reads: ${parts.filter(Boolean).join(', ')}`);
    }
    return { ...result, extension, missingDatasets, questionCut, modelCalls, ...(notes.length ? { note: notes.join('; ') } : {}) };
  }
}
