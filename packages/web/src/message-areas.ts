// Every area's messages (each area keeps a messages.ts beside its pages), in
// one list: i18n.ts takes its key type from it, and a test checks that no key
// is in two areas (the later one would silently replace the earlier one's
// text). No page loads this list: each entry adds only its own areas.
import * as apps from './apps/messages';
import * as chat from './chat/messages';
import * as gatewayConsole from './console/messages';
import * as consoleChannels from './console/channels/messages';
import * as consoleDashboard from './console/dashboard/messages';
import * as consoleGroups from './console/groups/messages';
import * as consoleLogs from './console/logs/messages';
import * as consolePrices from './console/prices/messages';
import * as consoleLimits from './console/limits/messages';
import * as consoleTokens from './console/tokens/messages';
import * as consoleUsers from './console/users/messages';
import * as datasets from './datasets/messages';
import * as core from './messages';
import * as settings from './settings/messages';
import * as tools from './tools/messages';

export const areas = [
  core,
  datasets,
  apps,
  tools,
  chat,
  settings,
  gatewayConsole,
  consoleDashboard,
  consoleChannels,
  consoleUsers,
  consoleTokens,
  consoleLogs,
  consolePrices,
  consoleLimits,
  consoleGroups,
] as const;
