// The platform using a model, as it does for people: a chat model answers
// through a throwaway application's OpenAI-compatible endpoint, a vector model
// embeds a search in a throwaway knowledge base. Both are deleted afterwards.
import { fail, ok, skip, warn, type Check, type Found } from './check.js';
import { errorText, request, withId } from './http.js';

const NAME = 'platform request';

/** Why the platform step cannot run for this model, as a row; undefined when it can. */
function notRunnable(f: Found, model: string): Check | undefined {
  if (f.platformProblem || !f.platformModels) return skip(NAME, `not checked: ${f.platformProblem ?? 'the platform was not reached'}`, model);
  if (!f.platformModels.has(model))
    return warn(
      NAME,
      'the running platform does not offer it: it started with another config.json',
      'restart the platform so that it loads config.json',
      model,
    );
  return undefined;
}

export const short = (text: string, max = 60) => (text.length > max ? `${text.slice(0, max)}…` : text);

export async function platformChat(f: Found, model: string): Promise<Check> {
  const not = notRunnable(f, model);
  if (not) return not;
  const { platformUrl: url, platformKey: key, timeoutMs } = f.opts;
  const app = await request(`${url}/api/core/app/create`, { token: key, body: { name: `kbchat doctor: ${model}`, model }, timeoutMs });
  if (app.status !== 200) return fail(NAME, `an application on it cannot be created (${app.status}): ${errorText(app)}`, undefined, model);
  const appId = app.json.data as string;
  try {
    const made = await request(`${url}/api/support/openapi/create`, { token: key, body: { name: 'kbchat doctor', appId }, timeoutMs });
    if (made.status !== 200) return fail(NAME, `an application key cannot be made (${made.status}): ${errorText(made)}`, undefined, model);
    const chat = await request(`${url}/api/v1/chat/completions`, {
      token: made.json.data as string,
      body: { messages: [{ role: 'user', content: 'Say hi in one word.' }], stream: false },
      timeoutMs,
    });
    const content = chat.json?.choices?.[0]?.message?.content;
    if (chat.status !== 200 || typeof content !== 'string') {
      return fail(
        NAME,
        `/api/v1/chat/completions answered ${chat.status}: ${errorText(chat)}`,
        "the platform's call to the gateway failed: the message names the gateway's request id (gateway console, Logs)",
        model,
      );
    }
    return ok(NAME, `an application on it answered "${short(content)}" in ${chat.ms} ms`, model);
  } finally {
    await request(`${url}/api/core/app/del?appId=${encodeURIComponent(appId)}`, { method: 'DELETE', token: key, timeoutMs }).catch(() => {});
  }
}

export async function platformSearch(f: Found, model: string): Promise<Check> {
  const not = notRunnable(f, model);
  if (not) return not;
  const { platformUrl: url, platformKey: key, timeoutMs } = f.opts;
  const made = await request(`${url}/api/core/dataset/create`, { token: key, body: { name: `kbchat doctor: ${model}`, vectorModel: model }, timeoutMs });
  if (made.status !== 200) return fail(NAME, `a knowledge base on it cannot be created (${made.status}): ${errorText(made)}`, undefined, model);
  const datasetId = made.json.data as string;
  try {
    const search = await request(`${url}/api/core/dataset/searchTest`, {
      token: key,
      body: { datasetId, text: 'kbchat doctor checks this model', searchMode: 'embedding' },
      timeoutMs,
    });
    if (search.status !== 200) {
      return fail(
        NAME,
        withId(`a vector search on it answered ${search.status}: ${errorText(search)}`, search.requestId),
        "the platform's embedding of the question failed as the message says",
        model,
      );
    }
    return ok(NAME, `a vector search in a knowledge base on it ran in ${search.ms} ms`, model);
  } finally {
    await request(`${url}/api/core/dataset/delete?id=${encodeURIComponent(datasetId)}`, { method: 'DELETE', token: key, timeoutMs }).catch(() => {});
  }
}
