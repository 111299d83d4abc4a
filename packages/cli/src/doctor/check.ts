// One row of the doctor's report, and the state later checks read from earlier ones.
import type { ModelConfig } from '@kbchat/platform';
import type { DoctorOptions } from './options.js';

export type Status = 'ok' | 'warn' | 'fail' | 'skip';

export interface Check {
  name: string;
  model?: string;
  status: Status;
  detail: string;
  remedy?: string;
}

/** A channel as GET /api/channels shows it (no key: only whether one is set). */
export interface ChannelInfo {
  id: number;
  name: string;
  type: string;
  base_url: string | null;
  models: string[];
  options: { modelTypes?: Record<string, string> };
  status: string;
  source: string;
  disabled_models: Array<{ model: string; reason: string }>;
}

export interface DatasetInfo {
  id: string;
  name: string;
  vectorModel: string;
  vectorDimensions: number | null;
}

/** What the first checks found, for the model checks. */
export interface Found {
  opts: DoctorOptions;
  /** The gateway answered its /healthz. */
  gatewayUp?: boolean;
  /** The gateway answers and the admin token is accepted: channels are known. */
  channels?: ChannelInfo[];
  /** Why the gateway cannot be used, for the rows that are skipped. */
  gatewayProblem?: string;
  /** Models the gateway lists for the platform's token. */
  served?: Set<string>;
  config?: ModelConfig;
  /** Models the running platform offers, when its key is accepted. */
  platformModels?: Set<string>;
  platformProblem?: string;
  datasets?: DatasetInfo[];
}

export const ok = (name: string, detail: string, model?: string): Check => ({ name, ...(model ? { model } : {}), status: 'ok', detail });
export const warn = (name: string, detail: string, remedy?: string, model?: string): Check => ({
  name,
  ...(model ? { model } : {}),
  status: 'warn',
  detail,
  ...(remedy ? { remedy } : {}),
});
export const fail = (name: string, detail: string, remedy?: string, model?: string): Check => ({
  name,
  ...(model ? { model } : {}),
  status: 'fail',
  detail,
  ...(remedy ? { remedy } : {}),
});
export const skip = (name: string, detail: string, model?: string): Check => ({ name, ...(model ? { model } : {}), status: 'skip', detail });
