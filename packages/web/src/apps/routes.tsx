// The application pages, under /apps: the list (with create and delete), and
// one application's settings beside its test chat, its share links, its chat
// log, its annotations and its figures.
import { Route, Switch } from 'wouter';
import { AnnotationsPage } from './Annotations';
import { AppsPage } from './AppsPage';
import { AppStatsPage } from './AppStats';
import { ChatLogsPage } from './ChatLogs';
import { SettingsPage } from './SettingsPage';
import { ShareLinksPage } from './ShareLinks';
import './apps.css';

export default function AppRoutes() {
  return (
    <Switch>
      <Route path="/">
        <AppsPage />
      </Route>
      <Route path="/:appId/logs">{(params) => <ChatLogsPage key={params.appId} appId={params.appId} />}</Route>
      <Route path="/:appId/annotations">{(params) => <AnnotationsPage key={params.appId} appId={params.appId} />}</Route>
      <Route path="/:appId/stats">{(params) => <AppStatsPage key={params.appId} appId={params.appId} />}</Route>
      <Route path="/:appId/share">{(params) => <ShareLinksPage key={params.appId} appId={params.appId} />}</Route>
      <Route path="/:appId">{(params) => <SettingsPage key={params.appId} appId={params.appId} />}</Route>
    </Switch>
  );
}
