// config.json validation: every problem names its field; the embedded default
// is valid; a file that cannot be read or parsed says which and why.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConfigFileError,
  EMBEDDED_MODEL_CONFIG,
  embeddedModelConfig,
  loadModelConfig,
  modelsMissingFromGateway,
  parseModelConfig,
} from '../src/models/config-file.js';
import { loadPlatformConfig } from '../src/config.js';

const problem = (raw: unknown) => {
  try {
    parseModelConfig(raw, 'config.json');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigFileError);
    return (err as Error).message;
  }
  throw new Error('expected the config to be refused');
};

describe('config.json', () => {
  it('the embedded default lists the local models and is valid', () => {
    const c = parseModelConfig(EMBEDDED_MODEL_CONFIG);
    expect(c.llmModels.map((m) => m.model)).toEqual(['local-extractive']);
    expect(c.vectorModels.map((m) => m.model)).toEqual(['local-embed']);
    expect(c.llmModels[0]).toMatchObject({ toolChoice: false, functionCall: false });
    expect(c.systemEnv).toMatchObject({ vectorMaxProcess: 2, hnswEfSearch: 100 });
  });

  it('names the field of each problem', () => {
    expect(problem({ vectorModels: [] })).toMatch(/llmModels/);
    expect(problem({ llmModels: [] })).toMatch(/llmModels: at least one enabled model/);
    expect(problem({ llmModels: [{ model: 'a', isActive: false }] })).toMatch(/llmModels: at least one enabled model/);
    expect(problem({ llmModels: [{ name: 'no model' }] })).toMatch(/llmModels\[0\]\.model/);
    expect(problem({ llmModels: [{ model: 'a', maxContext: -5 }] })).toMatch(/llmModels\[0\]\.maxContext/);
    expect(problem({ llmModels: [{ model: 'a' }], vectorModels: [{ model: 'v', defaultToken: 'big' }] })).toMatch(/vectorModels\[0\]\.defaultToken/);
    expect(problem({ llmModels: [{ model: 'a' }, { model: 'a' }] })).toMatch(/llmModels\[1\]\.model: "a" is listed twice/);
    expect(problem({ llmModels: [{ model: 'a' }], vectorModels: [{ model: 'v', isActive: false }] })).toMatch(/vectorModels: every model is disabled/);
    expect(problem({ llmModels: [{ model: 'a' }], systemEnv: { vectorMaxProcess: 0 } })).toMatch(/systemEnv\.vectorMaxProcess/);
    expect(problem({ llmModels: [{ model: 'a' }], unknownField: 1 })).toMatch(/unknownField|unrecognized/i);
  });

  it('an empty object or array parameter must be {} or [], never null or ""', () => {
    expect(problem({ llmModels: [{ model: 'a', defaultConfig: null }] })).toMatch(/llmModels\[0\]\.defaultConfig/);
    expect(problem({ llmModels: [{ model: 'a', defaultConfig: '' }] })).toMatch(/llmModels\[0\]\.defaultConfig/);
    expect(problem({ llmModels: [{ model: 'a' }], vectorModels: [{ model: 'v', dbConfig: [] }] })).toMatch(/vectorModels\[0\]\.dbConfig/);
    expect(problem({ llmModels: [{ model: 'a' }], reRankModels: null })).toMatch(/reRankModels/);
    expect(parseModelConfig({ llmModels: [{ model: 'a', defaultConfig: {} }], vectorModels: [], reRankModels: [] }).vectorModels).toEqual([]);
  });

  it('says "use {}" or "use []" for an empty set written otherwise, not zod\'s "expected record"', () => {
    const objectNull = problem({ llmModels: [{ model: 'a', defaultConfig: null }] });
    expect(objectNull).toMatch(/llmModels\[0\]\.defaultConfig: must be an object: use \{\} for an empty one/);
    expect(objectNull).not.toMatch(/expected record/);
    expect(problem({ llmModels: [{ model: 'a' }], vectorModels: [{ model: 'v', queryConfig: [] }] })).toMatch(
      /vectorModels\[0\]\.queryConfig: must be an object: use \{\}/,
    );
    expect(problem({ llmModels: [{ model: 'a' }], reRankModels: null })).toMatch(/reRankModels: must be a list: use \[\] for an empty one/);
    expect(problem({ llmModels: [{ model: 'a' }], vectorModels: {} })).toMatch(/vectorModels: must be a list: use \[\]/);
    expect(problem({ llmModels: [{ model: 'a' }], systemEnv: null })).toMatch(/systemEnv: must be an object: use \{\}/);
  });

  it("accepts FastGPT's other top-level keys with one warning naming them; other unknown keys are still refused", () => {
    const warnings: string[] = [];
    const fastgpt = {
      feConfigs: { lafEnv: 'https://laf.dev' },
      systemEnv: { vectorMaxProcess: 15, qaMaxProcess: 15 },
      llmModels: [{ model: 'gpt-4o-mini', avatar: '/imgs/model/openai.svg', charsPointsPrice: 0, censor: false }],
      vectorModels: [{ model: 'text-embedding-ada-002', defaultToken: 700, maxToken: 3000, weight: 100 }],
      reRankModels: [],
      audioSpeechModels: [{ model: 'tts-1', name: 'OpenAI TTS1', voices: [] }],
      whisperModel: { model: 'whisper-1', name: 'Whisper1' },
    };
    const c = parseModelConfig(fastgpt, 'config.json', (w) => warnings.push(w));
    expect(c.llmModels.map((m) => m.model)).toEqual(['gpt-4o-mini']);
    expect(warnings).toEqual(['config.json: feConfigs, audioSpeechModels, whisperModel are FastGPT settings that kbchat does not use: ignored']);
    expect(problem({ ...fastgpt, llmModel: [] })).toMatch(/llmModel/);
  });

  it("the embedded default offers the models of the gateway's provider channels first, and needs some LLM", () => {
    const c = parseModelConfig(embeddedModelConfig({ providerModels: { llm: ['gpt-4o-mini', 'gpt-4o'], embedding: ['text-embedding-3-small'], rerank: [] } }));
    expect(c.llmModels.map((m) => m.model)).toEqual(['gpt-4o-mini', 'gpt-4o', 'local-extractive']);
    expect(c.vectorModels.map((m) => m.model)).toEqual(['text-embedding-3-small', 'local-embed']);
    expect(c.llmModels.find((m) => m.usedInClassify)?.model).toBe('gpt-4o-mini');
    const noLocal = loadModelConfig(undefined, { localModels: false, providerModels: { llm: ['deepseek-chat'], embedding: [], rerank: [] } });
    expect(noLocal.llmModels.map((m) => m.model)).toEqual(['deepseek-chat']);
    expect(noLocal.vectorModels).toEqual([]);
    expect(() => loadModelConfig(undefined, { localModels: false })).toThrow(/no models: LOCAL_MODELS is off/);
  });

  it('examples/config.openai.json is valid and passes without a warning', () => {
    const warnings: string[] = [];
    const c = loadModelConfig(join(import.meta.dirname, '../../../examples/config.openai.json'), { onWarning: (w) => warnings.push(w) });
    expect(c.llmModels.map((m) => m.model)).toEqual(['gpt-4o-mini', 'gpt-4o']);
    expect(c.vectorModels.map((m) => m.model)).toEqual(['text-embedding-3-small']);
    expect(warnings).toEqual([]);
  });

  it('a file that cannot be read or is not JSON says so, naming the path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-config-'));
    expect(() => loadModelConfig(join(dir, 'missing.json'))).toThrow(/missing\.json cannot be read/);
    writeFileSync(join(dir, 'bad.json'), '{"llmModels": [');
    expect(() => loadModelConfig(join(dir, 'bad.json'))).toThrow(/bad\.json is not JSON/);
  });

  it('names every configured model the gateway does not serve', () => {
    const c = parseModelConfig({ llmModels: [{ model: 'a' }, { model: 'b' }], vectorModels: [{ model: 'v' }], reRankModels: [{ model: 'r' }] });
    expect(modelsMissingFromGateway(c, new Set(['a', 'v']))).toEqual(['b', 'r']);
  });
});

describe("the platform's environment", () => {
  it('INDEX_RETRY_BASE_MS: 2 s by default, a whole number of ms when set, and a bad value named', () => {
    expect(loadPlatformConfig({}).indexRetryBaseMs).toBe(2000);
    expect(loadPlatformConfig({ INDEX_RETRY_BASE_MS: '500' }).indexRetryBaseMs).toBe(500);
    for (const bad of ['2s', '0', '-1', '1.5'])
      expect(() => loadPlatformConfig({ INDEX_RETRY_BASE_MS: bad })).toThrow(`INDEX_RETRY_BASE_MS must be a whole number >= 1 (got "${bad}")`);
  });
});
