// What a provider is told about a channel and what it answers with: apart
// from types.ts so that wire.ts can use them without a cycle.
import type { Endpoint, ChannelOptions } from '@kbchat/contracts';

export type { Endpoint, ChannelOptions };

export interface UpstreamTarget {
  url: string;
  headers: Record<string, string>;
}
