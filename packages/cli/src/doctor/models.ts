// Every configured model, in config.json's order (chat, vector, rerank): the
// upstream directly, the gateway, the platform, then the model's own checks.
// A model's chain stops at its first failure: later steps would only repeat it.
import type { LlmModel } from '@kbchat/platform';
import { skip, type Check, type Found } from './check.js';
import { gatewayChat, toolChecks } from './chat.js';
import { platformChat, platformSearch } from './platform-steps.js';
import { upstreamCheck } from './upstream.js';
import { gatewayEmbeddings, gatewayRerank } from './vectors.js';

type Step = () => Promise<Check | Check[]>;

async function chain(steps: Step[]): Promise<Check[]> {
  const out: Check[] = [];
  for (const step of steps) {
    const got = await step();
    const checks = Array.isArray(got) ? got : [got];
    out.push(...checks);
    if (checks.some((c) => c.status === 'fail')) break;
  }
  return out;
}

export async function modelChecks(f: Found): Promise<Check[]> {
  const config = f.config;
  if (!config) return [];
  const models: Array<{ model: string; steps: Step[] }> = [
    ...config.llmModels.map((m: LlmModel) => ({
      model: m.model,
      steps: [() => upstreamCheck(f, m.model), () => gatewayChat(f, m), () => platformChat(f, m.model), () => toolChecks(f, m)],
    })),
    ...config.vectorModels.map((m) => ({
      model: m.model,
      steps: [() => upstreamCheck(f, m.model), () => gatewayEmbeddings(f, m.model), () => platformSearch(f, m.model)],
    })),
    ...config.reRankModels.map((m) => ({ model: m.model, steps: [() => upstreamCheck(f, m.model), () => gatewayRerank(f, m.model)] })),
  ];
  if (!f.channels || f.gatewayProblem)
    return models.map(({ model }) => skip('model', `not checked: ${f.gatewayProblem ?? 'the gateway was not reached'}`, model));
  const out: Check[] = [];
  for (const { steps } of models) out.push(...(await chain(steps)));
  return out;
}
